"""ExactlyOnceProcessor on the reference broker (Apache Kafka; Tansu serves aborted records
to read_committed readers, see tests/README.md): outputs, publications and offsets commit
together, an aborted transaction leaves nothing a read_committed reader sees, a kill -9
and restart neither duplicates nor loses an output, and a second instance with the same
transactional_id fences the first."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, TopicPartition

from kheaders._errors import ProcessingError
from kheaders.broker import Broker
from kheaders.deadletter import spring as sh
from kheaders.processing import ExactlyOnceProcessor, RetryTopics, delivery, emit
from tests.processing.helpers import Running, config, produce, wait_for

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _aborts_are_hidden_by_the_broker(broker: Broker) -> None:
    if broker.kind == "embedded":
        pytest.skip("Tansu serves aborted transactional records to read_committed readers")


def read_to_end(bootstrap: str, topic: str, isolation: str = "read_committed") -> list[Any]:
    """Every record of every partition of ``topic`` visible at ``isolation``, read to the
    end (the last stable offset for read_committed)."""
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "isolation.level": isolation,
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        parts = sorted(meta.partitions)
        consumer.assign([TopicPartition(topic, p, 0) for p in parts])
        out: list[Any] = []
        at_end: set[int] = set()
        deadline = time.monotonic() + 60
        while len(at_end) < len(parts):
            assert time.monotonic() < deadline, f"{topic} never read to its end"
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            err, partition = msg.error(), msg.partition() or 0
            if err is None:
                out.append(msg)
                at_end.discard(partition)
            elif err.code() == KafkaError._PARTITION_EOF:
                at_end.add(partition)
        return out
    finally:
        consumer.close()


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offsets (asked again while the coordinator is not ready)."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    wanted = [TopicPartition(topic, p) for p in range(partitions)]
    deadline = time.monotonic() + 30
    try:
        while True:
            try:
                found = consumer.committed(wanted, timeout=10)
                break
            except confluent_kafka.KafkaException:  # NOT_COORDINATOR, still loading...
                assert time.monotonic() < deadline, "the committed offsets never came"
                time.sleep(0.2)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in found}


def values(records: list[Any]) -> list[bytes]:
    return [m.value() for m in records]


# -- outputs, publications and offsets in one transaction ------------------------------------


def test_outputs_dead_letters_and_offsets_are_committed_together(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    """Every handled record's output and every failure's dead letter are read_committed once
    the offsets are committed; a failed in-place attempt's outputs are never sent (only the
    attempt that returned counts: nothing more was written, even uncommitted)."""
    topic, out = topic_factory(partitions=2), topic_factory()
    produce(bootstrap, topic, [{"key": b"k%d" % i, "value": b"v%d" % i} for i in range(30)])
    seen: list[bytes] = []

    def handle(msg: Any) -> None:
        seen.append(msg.value())
        tried = delivery(msg).in_place
        emit(out, msg.value().upper(), msg.key(), headers=[("try", b"%d" % tried)])
        if msg.value().endswith(b"3"):
            raise ValueError("declined")
        if msg.value().endswith(b"5") and not tried:
            raise ValueError("transient")

    group = f"eos-{uuid.uuid4().hex[:8]}"
    processor = ExactlyOnceProcessor(
        config(bootstrap, group),
        [topic],
        handle,
        transactional_id=f"tx-{group}",
        retry=RetryTopics(delays=[], in_place=1),
        handle_signals=False,
    )
    running = Running(processor)
    try:
        wait_for(
            lambda: sum(committed(bootstrap, group, topic, 2).values()) == 30,
            what="the offsets committed",
        )
    finally:
        running.stop()
    outputs = read_to_end(bootstrap, out)
    expected = sorted(b"V%d" % i for i in range(30) if i % 10 != 3)
    assert sorted(values(outputs)) == expected
    assert all(m.key() == b"k" + m.value()[1:] for m in outputs)
    assert {m.value(): dict(m.headers())["try"] for m in outputs if m.value()[-1:] == b"5"} == {
        b"V5": b"1",
        b"V15": b"1",
        b"V25": b"1",
    }
    assert len(read_to_end(bootstrap, out, "read_uncommitted")) == len(expected)
    assert Counter(seen)[b"v5"] == 2  # one record, two attempts in place, one output
    dead = read_to_end(bootstrap, f"{topic}-dlt")
    assert sorted(values(dead)) == [b"v13", b"v23", b"v3"]
    assert {dict(m.headers())[sh.EXCEPTION_MESSAGE] for m in dead} == {b"declined"}


def test_an_aborted_transaction_leaves_nothing_for_read_committed_and_run_stops(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    """A record the broker refuses (larger than its topic's max.message.bytes) aborts the
    batch's transaction: the outputs and the dead letter written before it stay invisible to
    read_committed (a read_uncommitted reader sees them written), no offset is committed,
    and after three aborts in a row run() stops with ProcessingError."""
    topic, out = topic_factory(), topic_factory()
    small = topic_factory(config={"max.message.bytes": "2000"})
    produce(bootstrap, topic, [{"value": b"v%d" % i} for i in range(4)])
    calls: Counter[bytes] = Counter()

    def handle(msg: Any) -> None:
        calls[msg.value()] += 1
        if msg.value() == b"v1":
            raise ValueError("declined")
        emit(out, b"out-" + msg.value())
        if msg.value() == b"v2":
            emit(small, b"x" * 10_000)

    group = f"eos-{uuid.uuid4().hex[:8]}"
    processor = ExactlyOnceProcessor(
        config(bootstrap, group),
        [topic],
        handle,
        transactional_id=f"tx-{group}",
        dead_letter=True,
        handle_signals=False,
    )
    running = Running(processor)
    wait_for(lambda: not running.alive, timeout=30, what="run() to give up")
    with pytest.raises(ProcessingError, match="3 transactions in a row aborted"):
        running.stop()
    assert calls[b"v0"] == 3  # each abort rewound to the committed offset: handled again
    assert read_to_end(bootstrap, out) == []
    assert read_to_end(bootstrap, f"{topic}-dlt") == []
    written = values(read_to_end(bootstrap, out, "read_uncommitted"))
    assert b"out-v0" in written
    assert b"v1" in values(read_to_end(bootstrap, f"{topic}-dlt", "read_uncommitted"))
    assert committed(bootstrap, group, topic, 1) == {0: confluent_kafka.OFFSET_INVALID}


def test_after_an_abort_the_batch_is_handled_again_and_each_output_is_committed_once(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    """One refused output aborts its batch once: the partitions go back to their committed
    offsets, the batch is handled again (its records twice), and read_committed sees every
    output once; the aborted first outputs were written (read_uncommitted) and hidden."""
    topic, out = topic_factory(partitions=2), topic_factory()
    small = topic_factory(config={"max.message.bytes": "2000"})
    produce(bootstrap, topic, [{"key": b"k%d" % i, "value": b"v%d" % i} for i in range(20)])
    calls: Counter[bytes] = Counter()

    def handle(msg: Any) -> None:
        calls[msg.value()] += 1
        emit(out, b"out-" + msg.value(), msg.key())
        if msg.value() == b"v5" and calls[b"v5"] == 1:
            emit(small, b"x" * 10_000)  # the broker refuses it: this batch aborts

    group = f"eos-{uuid.uuid4().hex[:8]}"
    processor = ExactlyOnceProcessor(
        config(bootstrap, group),
        [topic],
        handle,
        transactional_id=f"tx-{group}",
        handle_signals=False,
    )
    running = Running(processor)
    try:
        wait_for(
            lambda: sum(committed(bootstrap, group, topic, 2).values()) == 20,
            what="every offset committed",
        )
    finally:
        running.stop()  # no error: one abort is not three
    assert calls[b"v5"] == 2
    assert sorted(values(read_to_end(bootstrap, out))) == sorted(b"out-v%d" % i for i in range(20))
    assert values(read_to_end(bootstrap, small)) == []
    uncommitted = Counter(values(read_to_end(bootstrap, out, "read_uncommitted")))
    assert uncommitted[b"out-v5"] == 2


# -- a zombie is fenced ------------------------------------------------------------------------


def test_a_second_instance_with_the_same_transactional_id_fences_the_first(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    """The first instance is stopped mid-batch (its outputs and a dead letter written, not
    committed) when a second one starts with its transactional_id: what the first wrote is
    aborted, its run() stops with ProcessingError saying it was fenced, and the second's
    outputs are the only ones read_committed sees, each once."""
    topic, out = topic_factory(), topic_factory()
    produce(bootstrap, topic, [{"value": b"v%d" % i} for i in range(8)])
    reached, gate = threading.Event(), threading.Event()

    def first(msg: Any) -> None:
        if msg.value() == b"v3":
            raise ValueError("declined")
        if msg.value() == b"v6":
            reached.set()
            gate.wait(60)
        emit(out, b"A-" + msg.value())

    def second(msg: Any) -> None:
        if msg.value() == b"v3":
            raise ValueError("declined")
        emit(out, b"B-" + msg.value())

    txid = f"tx-{uuid.uuid4().hex[:8]}"
    made = [
        ExactlyOnceProcessor(
            config(bootstrap, f"eos-{name}-{txid}"),  # its own group: it keeps its partition
            [topic],
            handler,
            transactional_id=txid,
            dead_letter=True,
            handle_signals=False,
        )
        for name, handler in (("a", first), ("b", second))
    ]
    a = Running(made[0])
    b: Running | None = None
    try:
        wait_for(reached.is_set, what="the first instance mid-batch")
        wait_for(  # written inside the open transaction
            lambda: (
                len(read_to_end(bootstrap, out, "read_uncommitted")) == 5
                and len(read_to_end(bootstrap, f"{topic}-dlt", "read_uncommitted")) == 1
            ),
            what="the first instance's outputs written",
        )
        b = Running(made[1])
        wait_for(lambda: len(read_to_end(bootstrap, out)) == 7, what="the second's outputs")
        gate.set()
        wait_for(lambda: not a.alive, what="the fenced instance to stop")
        with pytest.raises(ProcessingError, match=f"fenced.*{txid}"):
            a.stop()
    finally:
        gate.set()
        if b is not None:
            b.stop()
    assert sorted(values(read_to_end(bootstrap, out))) == sorted(
        b"B-v%d" % i for i in range(8) if i != 3
    )
    dead = read_to_end(bootstrap, f"{topic}-dlt")
    assert [dict(m.headers())[sh.ORIGINAL_CONSUMER_GROUP] for m in dead] == [
        f"eos-b-{txid}".encode()
    ]
    assert committed(bootstrap, f"eos-a-{txid}", topic, 1) == {0: confluent_kafka.OFFSET_INVALID}


# -- kill -9 and restart ---------------------------------------------------------------------


def _start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.processing.exactly_once_service", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _handled(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [line.split(" ", 1)[1] for line in log.read_text().splitlines() if " " in line]


def test_kill_9_mid_transaction_and_restart_outputs_each_record_once(
    bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    """Killed with SIGKILL three times mid-run (a transaction open: records handled, outputs
    written, nothing committed) and restarted with the same transactional_id each time:
    read_committed downstream sees every output exactly once and every poison record's
    dead letter exactly once, though some records were handled more than once."""
    n = 600
    topic, out = topic_factory(partitions=3), topic_factory(partitions=3)
    produce(bootstrap, topic, [{"key": b"k%d" % i, "value": b"v%d" % i} for i in range(n)])
    txid = f"tx-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "handled.txt"
    args = [bootstrap, topic, out, f"eos-{txid}", txid, str(log)]
    for kill in range(1, 4):
        proc = _start(args)
        try:
            wait_for(
                lambda k=kill: len(_handled(log)) >= k * n // 5,  # type: ignore[misc]
                what=f"run {kill} under way",
            )
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        assert proc.returncode == -signal.SIGKILL
    poison = {b"v%d" % i for i in range(n) if i % 20 == 7}
    wanted = sorted(b"out-v%d" % i for i in range(n) if i % 20 != 7)
    proc = _start(args)
    try:
        wait_for(
            lambda: (
                len(read_to_end(bootstrap, out)) >= len(wanted)
                and len(read_to_end(bootstrap, f"{topic}-dlt")) >= len(poison)
            ),
            timeout=120,
            what="every output committed",
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=60)
    assert "stopped cleanly" in stdout
    outputs = read_to_end(bootstrap, out)
    assert sorted(values(outputs)) == wanted  # nothing twice, nothing missing
    assert all(dict(m.headers())["from"] == m.value()[4:] for m in outputs)
    assert sorted(values(read_to_end(bootstrap, f"{topic}-dlt"))) == sorted(poison)
    handled = Counter(_handled(log))
    assert max(handled[f"v{i}"] for i in range(n) if i % 20 != 7) > 1  # the kills landed
    # mid-transaction: those records were handled again, their first outputs aborted
    uncommitted = values(read_to_end(bootstrap, out, "read_uncommitted"))
    assert len(uncommitted) > len(wanted)
