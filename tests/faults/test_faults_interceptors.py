"""Faulty interceptors and (de)serializers lose no record: each fault stays with its record.

Interceptors that raise on every call, return None, or are slow are logged, counted in the
chain's ``errors`` and skipped; serializer failures fail that record only; a poison record
on the consume side raises DeserializationError for it alone and goes to a dead-letter topic
with its headers.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import structlog
from confluent_kafka import TopicPartition

from kheaders import (
    Consumer,
    DeserializationError,
    Headers,
    Producer,
    ProducerRecord,
    RecordMetadata,
    SerializationError,
)
from kheaders.deadletter import DeadLetterPublisher

pytestmark = pytest.mark.integration

N = 300


class Raising:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        raise RuntimeError("boom on send")

    def on_acknowledgement(self, metadata: RecordMetadata, error: object, headers: Headers) -> None:
        raise RuntimeError("boom on ack")

    def on_consume(self, messages: list[Any]) -> list[Any]:
        raise RuntimeError("boom on consume")


class ReturnsNone:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        record.headers.add("seen-by-none", b"1")  # its change is kept: Kafka's last good record
        return None  # type: ignore[return-value]

    def on_consume(self, messages: list[Any]) -> list[Any]:
        return None  # type: ignore[return-value]


class Slow:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        time.sleep(0.0005)
        record.headers.add("slow", b"1")
        return record


class Ledger:
    def __init__(self) -> None:
        self.acks: dict[bytes, list[object]] = {}

    def on_acknowledgement(self, metadata: RecordMetadata, error: object, headers: Headers) -> None:
        key = headers.last_value("id")
        assert isinstance(key, bytes)
        self.acks.setdefault(key, []).append(error)


class Utf8:
    def serialize(self, topic: str, headers: Headers, data: Any) -> bytes:
        if data == "poison":
            raise ValueError("this value cannot be serialized")
        return str(data).encode()

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> str:
        assert data is not None
        return data.decode("utf-8")


def _consume_all(
    consumer: Consumer, want: int, dlt: DeadLetterPublisher | None = None
) -> tuple[list[Any], int]:
    got: list[Any] = []
    dead = 0
    deadline = time.monotonic() + 30
    while len(got) + dead < want and time.monotonic() < deadline:
        try:
            batch = consumer.consume(100, 0.2)
        except DeserializationError as exc:
            dead += 1
            if dlt is not None:
                dlt.publish(exc)
            continue
        got.extend(m for m in batch if m.error() is None)
    return got, dead


def test_raising_none_returning_and_slow_interceptors_lose_no_record(
    bootstrap: str, topic: str
) -> None:
    ledger = Ledger()
    raising, none, slow = Raising(), ReturnsNone(), Slow()
    producer = Producer(
        {"bootstrap.servers": bootstrap}, interceptors=[raising, none, slow, ledger]
    )
    with structlog.testing.capture_logs() as logs:
        for i in range(N):
            producer.produce(topic, b"v%d" % i, headers=[("id", b"%d" % i)])
        assert producer.flush(15) == 0
    errors = producer.interceptors.errors
    assert sum(errors.values()) == 3 * N  # Raising: send + ack; ReturnsNone: send
    assert [n for n, c in errors.items() if c] == [
        n for n in errors if "Raising" in n or "ReturnsNone" in n
    ]
    failed = [e for e in logs if e["event"] == "interceptor failed, skipped"]
    assert len(failed) == 3 * N
    assert {e["hook"] for e in failed} == {"on_send", "on_acknowledgement"}
    assert all(e["topic"] == topic for e in failed)
    assert len(ledger.acks) == N
    assert all(v == [None] for v in ledger.acks.values())  # each told once, delivered

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "faulty"},
        interceptors=[Raising(), ReturnsNone()],
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    with structlog.testing.capture_logs() as logs:
        got, _ = _consume_all(consumer, N)
    consumer.close()
    assert len(got) == N
    assert [m.headers().last_value("slow") for m in got] == [b"1"] * N
    assert [m.headers().last_value("seen-by-none") for m in got] == [b"1"] * N
    assert sorted(int(m.headers().last_value("id")) for m in got) == list(range(N))
    assert consumer.interceptors.errors
    assert all(consumer.interceptors.errors.values())
    assert {e["hook"] for e in logs if e["event"] == "interceptor failed, skipped"} == {
        "on_consume"
    }
    print(f"\nproducer chain errors {dict(errors)}; consumer {dict(consumer.interceptors.errors)}")


def test_serializer_fault_fails_that_record_only(bootstrap: str, topic: str) -> None:
    ledger = Ledger()
    producer = Producer(
        {"bootstrap.servers": bootstrap}, value_serializer=Utf8(), interceptors=[ledger]
    )
    raised = []
    for i, value in enumerate(["a", "poison", "b", "poison", "c"]):
        try:
            producer.produce(topic, value, headers=[("id", b"%d" % i)])
        except SerializationError as exc:
            raised.append((i, exc.field, str(exc)))
    assert producer.flush(10) == 0
    assert [i for i, _, _ in raised] == [1, 3]
    assert all(f == "value" and "cannot be serialized" in m for _, f, m in raised)
    assert [type(ledger.acks[b"%d" % i][0]) for i in (1, 3)] == [SerializationError] * 2
    assert [ledger.acks[b"%d" % i] for i in (0, 2, 4)] == [[None]] * 3
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "ser"}, value_deserializer=Utf8()
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got, _ = _consume_all(consumer, 3)
    consumer.close()
    assert [m.value() for m in got] == ["a", "b", "c"]


def test_poison_record_raises_alone_and_reaches_dead_letter_with_its_headers(
    bootstrap: str, topic_factory: Any
) -> None:
    topic, dlt_topic = topic_factory(), topic_factory()
    raw = Producer({"bootstrap.servers": bootstrap})
    for i in range(20):
        value = b"\xff\xfe not utf-8" if i in (5, 13) else b"ok%d" % i
        raw.produce(topic, value, b"k%d" % i, headers=[("id", b"%d" % i), ("bin", b"\x00\xff")])
    assert raw.flush(10) == 0
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "poison"}, value_deserializer=Utf8()
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    publisher = DeadLetterPublisher(raw, dlt_topic, group_id="poison")
    got, dead = _consume_all(consumer, 20, publisher)
    consumer.close()
    assert raw.flush(10) == 0
    assert dead == 2
    assert [m.value() for m in got] == [f"ok{i}" for i in range(20) if i not in (5, 13)]
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "dlt-reader"})
    reader.assign([TopicPartition(dlt_topic, 0, 0)])
    dead_letters, _ = _consume_all(reader, 2)
    reader.close()
    assert [m.key() for m in dead_letters] == [b"k5", b"k13"]
    assert [m.value() for m in dead_letters] == [b"\xff\xfe not utf-8"] * 2
    for m, i in zip(dead_letters, (5, 13), strict=True):
        assert list(m.headers())[:2] == [("id", b"%d" % i), ("bin", b"\x00\xff")]
