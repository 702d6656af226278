"""Every place that reads a raw confluent Message's headers goes through one guard.

A header key that is not UTF-8 (another client wrote it; Kafka allows it) makes confluent-kafka
2.16's ``Message.headers()`` raise SystemError and, once CPython has specialized the call,
return a list holding a NULL key instead, which crashes whoever formats it. compaction's
``latest()`` used to raise SystemError on the first call and return a corrupt state later.

The records are written by kafka-python and read by a raw confluent-kafka consumer; each call
site runs in a child process (a crash fails the test, not the run), many times over, so the
specialized call path is exercised too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

kafka = pytest.importorskip("kafka", reason="kafka-python is in the dev extra")

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


class RawKey(str):
    """A header key kafka-python writes as the given bytes (it calls ``key.encode()``)."""

    raw: bytes

    def __new__(cls, raw: bytes) -> RawKey:
        self = super().__new__(cls, raw.decode("utf-8", "surrogateescape"))
        self.raw = raw
        return self

    def encode(self, *args: Any, **kwargs: Any) -> bytes:  # type: ignore[override]
        return self.raw


ROUNDS = 10  # the pattern repeats: every call site runs often enough to be specialized


def _write(bootstrap: str, topic: str) -> None:
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap)
    for _ in range(ROUNDS):
        producer.send(topic, key=b"a", value=b"1", headers=[("ok", b"1")])
        producer.send(topic, key=b"b", value=b"2", headers=[(RawKey(b"\xff\xfe"), b"s3cr3t")])
        producer.send(topic, key=b"a", value=b"3", headers=[("ok", b"3")])
    producer.flush()
    producer.close()


CHILD = textwrap.dedent(
    """
    import io, json, sys, uuid
    import confluent_kafka
    from confluent_kafka import TopicPartition

    BOOTSTRAP, TOPIC, N = sys.argv[1], sys.argv[2], 3 * int(sys.argv[3])

    def fresh():
        c = confluent_kafka.Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": uuid.uuid4().hex})
        c.assign([TopicPartition(TOPIC, 0, 0)])
        got = []
        while len(got) < N:
            got += [m for m in c.consume(N, 1.0) if m.error() is None]
        c.close()
        return got

    def report(site, **fields):
        print(json.dumps({"site": site, **fields}), flush=True)

    from kheaders import DeserializationError, Headers, Producer
    from kheaders.deadletter import DeadLetterPublisher
    from kheaders.compaction import CompactionStats, LatestState, latest

    stats = CompactionStats()
    state = latest(fresh(), stats=stats)
    report("latest", keys=sorted(k.decode() for k in state), value=state[b"a"].value().decode(),
           records=stats.records, undeserializable=stats.undeserializable)

    raw = confluent_kafka.Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": uuid.uuid4().hex})
    with LatestState(TOPIC, raw) as ls:
        caught_up = ls.run_until_caught_up(20)
        report("LatestState", caught_up=caught_up, records=ls.stats.records,
               undeserializable=ls.stats.undeserializable, positions=ls.positions())
    raw.close()

    from kheaders._model.redact import Redactor
    from kheaders.cli._tail import format_record
    texts = [format_record(m, Redactor()) for m in fresh()]
    report("tail", text=texts[1])

    errors = []
    for m in fresh():
        try:
            Headers.from_message(m)
        except DeserializationError as exc:
            errors.append([exc.field, exc.message.offset(), str(exc)])
    report("Headers.from_message", errors=errors)

    from kheaders.interceptors._tracing_common import message_headers
    errors = []
    for m in fresh():
        try:
            message_headers(m)
        except DeserializationError as exc:
            errors.append(exc.message.offset())
    report("interceptors", errors=errors)

    producer = Producer({"bootstrap.servers": BOOTSTRAP})
    bad = fresh()[1]
    topic = DeadLetterPublisher(producer, TOPIC + ".dlt").publish(bad, ValueError("x"))
    report("dead letter", topic=topic, left=producer.flush(10))

    from kheaders.spark._arrow import BatchBuilder
    errors = []
    try:
        BatchBuilder(TOPIC, 0, True).add(fresh(), N)
    except DeserializationError as exc:
        errors.append(exc.message.offset())
    report("spark reader", errors=errors)
    """
)


@pytest.fixture(scope="module")
def outcomes(bootstrap: str) -> dict[str, dict[str, Any]]:
    import uuid

    from kheaders.broker import create_topic

    topic = create_topic(bootstrap, f"received-guard-{uuid.uuid4().hex[:8]}")
    _write(bootstrap, topic)
    result = subprocess.run(
        [sys.executable, "-c", CHILD, bootstrap, topic, str(ROUNDS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    lines = [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
    assert result.returncode == 0, (
        f"child died with {result.returncode} (SIGSEGV is -11) after"
        f" {[x['site'] for x in lines]}: {result.stderr[-3000:]}"
    )
    return {x.pop("site"): x for x in lines}


def test_latest_counts_the_unreadable_record_and_folds_the_rest(
    outcomes: dict[str, dict[str, Any]],
) -> None:
    assert outcomes["latest"] == {
        "keys": ["a"],
        "value": "3",
        "records": 2 * ROUNDS,
        "undeserializable": ROUNDS,
    }


def test_latest_state_over_a_raw_consumer_accounts_for_every_record(
    outcomes: dict[str, dict[str, Any]],
) -> None:
    assert outcomes["LatestState"] == {
        "caught_up": True,
        "records": 2 * ROUNDS,
        "undeserializable": ROUNDS,
        "positions": {"0": 3 * ROUNDS},
    }


def test_tail_prints_the_record_and_says_its_headers_are_unreadable(
    outcomes: dict[str, dict[str, Any]],
) -> None:
    text = outcomes["tail"]["text"]
    assert "@1" in text
    assert "value: 2" in text
    assert "<unreadable" in text
    assert "s3cr3t" not in text


def test_headers_from_message_and_interceptors_raise_deserialization_error_naming_the_offset(
    outcomes: dict[str, dict[str, Any]],
) -> None:
    errors = outcomes["Headers.from_message"]["errors"]
    assert [(field, offset) for field, offset, _ in errors] == [
        ("headers", 3 * i + 1) for i in range(ROUNDS)
    ]
    assert "offset 1" in errors[0][2]
    assert outcomes["interceptors"]["errors"] == [3 * i + 1 for i in range(ROUNDS)]


def test_dead_letter_publisher_sends_the_record_without_its_unreadable_headers(
    outcomes: dict[str, dict[str, Any]],
) -> None:
    assert outcomes["dead letter"]["left"] == 0
    assert outcomes["dead letter"]["topic"].endswith(".dlt")


def test_spark_reader_raises_deserialization_error_naming_the_offset(
    outcomes: dict[str, dict[str, Any]],
) -> None:
    assert outcomes["spark reader"]["errors"] == [1]
