"""Records written by other clients: non-UTF-8 header keys and non-text values never crash.

kafka-python (an independent implementation of the protocol) writes the records; a ``str``
subclass whose ``encode`` returns raw bytes lets it put a key on the wire that is not UTF-8,
which Kafka allows (keys are Java Strings only by convention of the Java client).

Documented representation: confluent-kafka 2.16 cannot read such a record's headers
(``Message.headers()`` fails with SystemError, and there is no raw form), so kheaders.Consumer
raises DeserializationError(field="headers") for that record alone, with its key and value
intact and its headers empty; the next records come as usual.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import Consumer as RawConsumer
from confluent_kafka import TopicPartition

from kheaders import (
    TEXT,
    TEXT_LENIENT,
    Consumer,
    DecodeError,
    DeserializationError,
    Headers,
)
from kheaders.deadletter import DeadLetterPublisher

kafka = pytest.importorskip("kafka", reason="kafka-python is in the dev extra")

pytestmark = pytest.mark.integration


class RawKey(str):
    """A header key kafka-python writes as the given bytes (it calls ``key.encode()``)."""

    raw: bytes

    def __new__(cls, raw: bytes) -> RawKey:
        self = super().__new__(cls, raw.decode("utf-8", "surrogateescape"))
        self.raw = raw
        return self

    def encode(self, *args: Any, **kwargs: Any) -> bytes:  # type: ignore[override]
        return self.raw


def _write(bootstrap: str, topic: str) -> None:
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(topic, key=b"k0", value=b"before", headers=[("ok", b"1")]).get(10)
    producer.send(
        topic, key=b"k1", value=b"bad-key", headers=[(RawKey(b"\xff\xfe"), b"x"), ("ok", b"2")]
    ).get(10)
    producer.send(topic, key=b"k2", value=b"after", headers=[("bin", b"\xff\x00caf\xe9")]).get(10)
    producer.flush()
    producer.close()


def test_raw_confluent_consumer_fails_on_a_non_utf8_header_key(bootstrap: str, topic: str) -> None:
    """Why kheaders has to step in: the raw client raises SystemError from headers()."""
    _write(bootstrap, topic)
    raw = RawConsumer({"bootstrap.servers": bootstrap, "group.id": "raw-foreign"})
    raw.assign([TopicPartition(topic, 0, 1)])
    msg = raw.poll(10)
    raw.close()
    assert msg is not None
    assert msg.value() == b"bad-key"
    with pytest.raises(SystemError):
        msg.headers()


@pytest.mark.parametrize("mode", ["poll", "consume"])
def test_non_utf8_header_key_reaches_the_application_as_a_deserialization_error(
    bootstrap: str, topic_factory: Any, mode: str
) -> None:
    topic, dlt = topic_factory(), topic_factory()
    _write(bootstrap, topic)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"foreign-{mode}"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    failures: list[DeserializationError] = []
    deadline = time.monotonic() + 20
    while len(got) + len(failures) < 3 and time.monotonic() < deadline:
        try:
            if mode == "poll":
                msg = consumer.poll(0.2)
                batch = [] if msg is None else [msg]
            else:
                batch = consumer.consume(10, 0.2)
        except DeserializationError as exc:
            failures.append(exc)
            continue
        got.extend(batch)
    consumer.close()
    assert [m.value() for m in got] == [b"before", b"after"]
    assert len(failures) == 1
    failure = failures[0]
    assert failure.field == "headers"
    assert "not UTF-8" in str(failure)
    assert (failure.message.key(), failure.message.value()) == (b"k1", b"bad-key")
    assert failure.message.headers() == Headers()
    # it can be dead-lettered like any other failure
    publisher = DeadLetterPublisher(kafka_free_producer(bootstrap), dlt)
    assert publisher.publish(failure) == dlt


def kafka_free_producer(bootstrap: str) -> Any:
    from kheaders import Producer

    return Producer({"bootstrap.servers": bootstrap})


def test_non_text_header_values_never_crash_text_accessors(bootstrap: str, topic: str) -> None:
    _write(bootstrap, topic)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "foreign-text"})
    consumer.assign([TopicPartition(topic, 0, 2)])
    msg = consumer.poll(10)
    consumer.close()
    assert msg is not None
    headers = msg.headers()
    with pytest.raises(DecodeError, match=r"not UTF-8.*offset 0"):
        headers.last_value("bin", TEXT)
    assert headers.last_value("bin", TEXT_LENIENT) == "\ufffd\x00caf\ufffd"
    assert headers.last_value("bin") == b"\xff\x00caf\xe9"  # the bytes are always there


def test_kheaders_tail_prints_every_record_including_one_with_unreadable_headers(
    bootstrap: str, topic: str
) -> None:
    import io

    from kheaders._model.redact import Redactor
    from kheaders.cli._tail import tail

    _write(bootstrap, topic)
    out = io.StringIO()
    assert (
        tail(bootstrap, topic, out, redactor=Redactor(), from_beginning=True, limit=3, timeout=15)
        == 0
    )
    text = out.getvalue()
    assert [line.split("  ")[0] for line in text.splitlines() if line.startswith(topic)] == [
        f"{topic}[0]@0",
        f"{topic}[0]@1",
        f"{topic}[0]@2",
    ]
    assert "value: bad-key" in text
    assert "value: after" in text
