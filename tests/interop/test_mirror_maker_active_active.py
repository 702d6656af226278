"""An active-active pair, A -> B and B -> A over the same topic name: MirrorMaker 2 with
``IdentityReplicationPolicy`` beside two ``kheaders mirror`` processes.

MirrorMaker 2 (connect-mirror 4.3, its dedicated driver) keeps topic names with that policy,
and its cycle check reads the source cluster from the topic name, so nothing stops a record
from going round: A's record reaches B, comes back to A as a new record, goes to B again, and
so on. kheaders mirrors keep the path in ``kheaders.hops`` and skip a record whose path holds
the target already. docs/mirror.md ("Beside MirrorMaker 2") points at these tests.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from kheaders.broker import create_topic
from tests.interop.jvm import Jvm, mirror_maker_classpath
from tests.support.brokers import LocalBroker, local_broker

pytestmark = pytest.mark.integration

# MirrorMaker 2's Connect runtime takes 30-70 s to its first copied record on a busy machine
MM2_DEADLINE = 240.0
DEADLINE = 90.0


@pytest.fixture(scope="module")
def cluster_b() -> Iterator[LocalBroker]:
    b = local_broker(cluster="kheaders-mm2-aab").start()
    try:
        yield b
    finally:
        b.stop()


def _keys(bootstrap: str, topic: str) -> Counter[bytes]:
    """How many records of each key ``topic`` (one partition, no longer written to) holds."""
    with _Reader(bootstrap, topic) as reader:
        c = reader.consumer
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            error = m.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    return reader.seen
                continue
            reader.seen[m.key() or b""] += 1
        raise AssertionError(f"{topic} on {bootstrap}: no end of partition within 30 s")


class _Reader:
    """Counts the keys of ``topic`` (one partition) from its start, as records arrive."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": f"aa-{uuid.uuid4().hex[:6]}",
             "enable.partition.eof": True, "enable.auto.commit": False}
        )  # fmt: skip
        self.topic = topic
        self.seen: Counter[bytes] = Counter()

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.consumer.close()

    def start(self) -> _Reader:
        self.consumer.assign([TopicPartition(self.topic, 0, 0)])
        return self

    def read(self) -> Counter[bytes]:
        """What has come so far."""
        for m in self.consumer.consume(1000, 0.2):
            if m.error() is None:
                self.seen[m.key() or b""] += 1
        return self.seen


def _wait(
    what: str, deadline: float, condition: Callable[[], bool], *procs: subprocess.Popen[bytes]
) -> None:
    """Poll ``condition`` until it holds; fail with ``what`` at ``deadline`` or if a copier dies."""
    end = time.monotonic() + deadline
    while not condition():
        for p in procs:
            assert p.poll() is None, f"a copier exited {p.returncode} while waiting for {what}"
        assert time.monotonic() < end, f"no {what} within {deadline:.0f} s"
        time.sleep(0.2)


def _stop(*procs: subprocess.Popen[bytes]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)


def _produce(bootstrap: str, topic: str, key: bytes) -> None:
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"v", key, partition=0, headers=[("own", b"1")])
    assert p.flush(30) == 0


def _pair(a: str, b: str, name: str, *, dead_letters: bool = False) -> str:
    """A topic of one partition on both clusters (with ``dead_letters``, its ``.dlt`` too)."""
    topic = create_topic(a, f"{name}-{uuid.uuid4().hex[:8]}", partitions=1)
    create_topic(b, topic, partitions=1)
    if dead_letters:
        create_topic(a, topic + ".dlt")
        create_topic(b, topic + ".dlt")
    return topic


def _mm2_properties(a: str, b: str, topic: str, tag: str) -> str:
    """Both flows of one MirrorMaker 2, topic names kept; aliases unique to this run so its
    Connect groups and internal topics are its own on the suite's shared cluster."""
    lines = [
        f"clusters = A{tag}, B{tag}",
        f"A{tag}.bootstrap.servers = {a}",
        f"B{tag}.bootstrap.servers = {b}",
        f"A{tag}->B{tag}.enabled = true",
        f"B{tag}->A{tag}.enabled = true",
        f"topics = {topic}",
        "groups = ^$",
        "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
        "emit.heartbeats.enabled = false",
        "emit.checkpoints.enabled = false",
        "sync.group.offsets.enabled = false",
        "sync.topic.acls.enabled = false",
        "sync.topic.configs.enabled = false",
        "refresh.topics.interval.seconds = 1",
        "refresh.groups.enabled = false",
        "replication.factor = 1",
        "checkpoints.topic.replication.factor = 1",
        "heartbeats.topic.replication.factor = 1",
        "offset-syncs.topic.replication.factor = 1",
        "offset.storage.replication.factor = 1",
        "status.storage.replication.factor = 1",
        "config.storage.replication.factor = 1",
    ]
    return "\n".join(lines) + "\n"


def test_mirror_maker_identity_policy_sends_a_record_round_and_round(
    jvm: Jvm, bootstrap: str, cluster_b: LocalBroker, tmp_path: Path
) -> None:
    classpath = mirror_maker_classpath()
    a, b = bootstrap, cluster_b.bootstrap
    topic = _pair(a, b, "mm2-aa")
    _produce(a, topic, b"from-a")
    config = tmp_path / "mm2.properties"
    config.write_text(_mm2_properties(a, b, topic, uuid.uuid4().hex[:6]))
    log = (tmp_path / "mm2.log").open("wb")
    mm2 = subprocess.Popen(
        ["java", "-Xmx384m", "-cp", classpath, "org.apache.kafka.connect.mirror.MirrorMaker",
         str(config)],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        with _Reader(a, topic).start() as on_a, _Reader(b, topic).start() as on_b:
            # the record written once on A comes back to A as a new record, and again
            _wait("third copy of A's record on A", MM2_DEADLINE,
                  lambda: on_a.read()[b"from-a"] >= 3, mm2)  # fmt: skip
            # and B, never written to directly, holds more than one copy of it too
            _wait("second copy of A's record on B", DEADLINE,
                  lambda: on_b.read()[b"from-a"] >= 2, mm2)  # fmt: skip
            print(
                f"mm2-active-active copies of one record: {on_a.read()[b'from-a']} on A, "
                f"{on_b.read()[b'from-a']} on B"
            )
    finally:
        _stop(mm2)
        log.close()


def _kheaders_mirror(
    source: str, target: str, topic: str, names: tuple[str, str]
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "kheaders.cli", "mirror", "--source", source, "--target", target,
         "--topic", topic, "--group", f"{topic}-{names[0]}", "--source-name", names[0],
         "--target-name", names[1]],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def test_kheaders_mirror_active_active_holds_each_record_once_on_each_side(
    bootstrap: str, cluster_b: LocalBroker
) -> None:
    a, b = bootstrap, cluster_b.bootstrap
    topic = _pair(a, b, "kh-aa", dead_letters=True)
    _produce(a, topic, b"from-a")
    _produce(b, topic, b"from-b")
    forth = _kheaders_mirror(a, b, topic, ("A", "B"))
    back = _kheaders_mirror(b, a, topic, ("B", "A"))
    try:
        both = {b"from-a", b"from-b"}
        _wait("both records on both sides", DEADLINE,
              lambda: set(_keys(a, topic)) >= both and set(_keys(b, topic)) >= both,
              forth, back)  # fmt: skip
        # A record written after them on each side, through both mirrors: once these are
        # across, whatever the mirrors did with the first two (copy them back or skip them)
        # is on the topics too, as each mirror copies a partition in order.
        _produce(a, topic, b"later-a")
        _produce(b, topic, b"later-b")
        later = both | {b"later-a", b"later-b"}
        _wait("the later records on both sides", DEADLINE,
              lambda: set(_keys(a, topic)) >= later and set(_keys(b, topic)) >= later,
              forth, back)  # fmt: skip
    finally:
        _stop(forth, back)
    for side in (a, b):
        assert _keys(side, topic) == {k: 1 for k in later}
