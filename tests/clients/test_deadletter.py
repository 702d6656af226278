"""Dead-letter publishing: the raw record, its original headers in order, and failure headers."""

from __future__ import annotations

import time
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import Message, TopicPartition

from kheaders import (
    Consumer,
    DeserializationError,
    Headers,
    JsonDeserializer,
    Producer,
)
from kheaders.deadletter import DeadLetterPublisher, dead_letter_headers
from kheaders.deadletter._own import (
    CONSUMER_GROUP,
    ERROR_FIELD,
    ERROR_MESSAGE,
    ERROR_TYPE,
    ORIGINAL_OFFSET,
    ORIGINAL_PARTITION,
    ORIGINAL_TIMESTAMP,
    ORIGINAL_TIMESTAMP_TYPE,
    ORIGINAL_TOPIC,
)
from tests.support.interceptors import Recorder, Utf8Deserializer, Utf8Serializer

BAD_UTF8 = b"\xc3\x28"


def test_headers_are_original_ones_in_order_then_failure_description() -> None:
    original = [("b", b"2"), ("a", None), ("b", b"")]
    msg = Message(
        topic="orders",
        partition=3,
        offset=42,
        key=b"k",
        value=BAD_UTF8,
        headers=original,
        timestamp=(confluent_kafka.TIMESTAMP_CREATE_TIME, 1700000000123),
    )
    try:
        BAD_UTF8.decode()
    except UnicodeDecodeError as cause:
        err = DeserializationError("value failed", message=msg, field="value")
        err.__cause__ = cause
    h = dead_letter_headers(msg, err, group_id="billing")
    assert list(h)[:3] == original
    assert list(h)[3:] == [
        (ORIGINAL_TOPIC, b"orders"),
        (ORIGINAL_PARTITION, b"3"),
        (ORIGINAL_OFFSET, b"42"),
        (ORIGINAL_TIMESTAMP, b"1700000000123"),
        (ORIGINAL_TIMESTAMP_TYPE, b"CreateTime"),
        (CONSUMER_GROUP, b"billing"),
        (ERROR_FIELD, b"value"),
        (ERROR_TYPE, b"builtins.UnicodeDecodeError"),
        (ERROR_MESSAGE, str(err.__cause__).encode()),
    ]


def test_processing_failure_without_timestamp_or_group_omits_those_headers() -> None:
    msg = Message(topic="t", partition=0, offset=1, value=b"v", timestamp=(0, 0))
    h = dead_letter_headers(msg, KeyError("sku"))
    assert h.keys() == [
        ORIGINAL_TOPIC,
        ORIGINAL_PARTITION,
        ORIGINAL_OFFSET,
        ERROR_TYPE,
        ERROR_MESSAGE,
    ]
    assert h.last_value(ERROR_TYPE) == b"builtins.KeyError"


def test_message_without_its_error_is_refused() -> None:
    raw = confluent_kafka.Producer({"bootstrap.servers": "127.0.0.1:9"})
    pub = DeadLetterPublisher(raw)
    with pytest.raises(TypeError, match="say why"):
        pub.publish(Message(topic="t", partition=0, offset=0))
    assert pub.topic_for("orders") == "orders-dlt"  # Spring's naming
    assert DeadLetterPublisher(raw, "all.dlt").topic_for("x") == "all.dlt"


def read_one(bootstrap: str, topic: str) -> Message:
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "dlt-read"})
    c.assign([TopicPartition(topic, 0, 0)])
    deadline = time.monotonic() + 15
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.1)
            if m is not None:
                assert m.error() is None, m.error()
                return m
    finally:
        c.close()
    raise AssertionError(f"nothing on {topic}")


@pytest.mark.integration
def test_failed_record_reaches_dead_letter_topic_byte_for_byte_and_consumer_goes_on(
    bootstrap: str, topic_factory: Any
) -> None:
    topic = topic_factory()
    dlt = topic_factory()
    original = [("trace", b"\x00\x01"), ("dup", b"1"), ("dup", None), ("ü", b"")]
    raw = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    raw.produce(topic, BAD_UTF8, "schlüssel".encode(), headers=original)
    raw.produce(topic, b"next", b"k2")
    assert raw.flush(10) == 0

    # the DLT producer has a serializer and an interceptor: both must be bypassed
    rec = Recorder()
    producer = Producer(
        {"bootstrap.servers": bootstrap}, value_serializer=Utf8Serializer(), interceptors=[rec]
    )
    publisher = DeadLetterPublisher(producer, dlt, group_id="g-dlt")
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "g-dlt"},
        value_deserializer=Utf8Deserializer(),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[Any] = []
    published: list[str] = []
    deadline = time.monotonic() + 15
    while len(values) < 1 and time.monotonic() < deadline:
        try:
            m = consumer.poll(0.1)
        except DeserializationError as exc:
            published.append(publisher.publish(exc))
            continue
        if m is not None:
            values.append(m.value())
    consumer.close()
    assert values == ["next"]
    assert published == [dlt]
    assert producer.flush(10) == 0
    producer.close(timeout=5)
    assert rec.sent == []

    out = read_one(bootstrap, dlt)
    assert (out.key(), out.value()) == ("schlüssel".encode(), BAD_UTF8)
    h = Headers(out.headers())
    assert list(h)[: len(original)] == original
    assert h.last_value(ORIGINAL_TOPIC) == topic.encode()
    assert h.last_value(ORIGINAL_OFFSET) == b"0"
    assert h.last_value(ORIGINAL_PARTITION) == b"0"
    assert h.last_value(CONSUMER_GROUP) == b"g-dlt"
    assert h.last_value(ERROR_FIELD) == b"value"
    assert h.last_value(ERROR_TYPE) == b"builtins.UnicodeDecodeError"
    assert b"utf-8" in (h.last_value(ERROR_MESSAGE) or b"")


@pytest.mark.integration
def test_deserialized_record_is_dead_lettered_with_the_exact_consumed_bytes(
    bootstrap: str, topic_factory: Any
) -> None:
    """publish(msg, err) of records a JSON (value) and UTF-8 (key) deserializer decoded sends
    the bytes consumed, which re-serializing the decoded objects would not give back."""
    topic = topic_factory()
    dlt = topic_factory()
    spaced = b'{ "b": 2,\n  "a": "\\u00fc" }'  # json.dumps of the dict differs in every way
    raw = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    raw.produce(topic, spaced, "schlüssel".encode(), headers=[("h", b"\x00")])
    raw.produce(topic, b"[1,  2]", None)  # no headers, no key
    assert raw.flush(10) == 0
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "g-dlt-kept"},
        key_deserializer=Utf8Deserializer(),
        value_deserializer=JsonDeserializer(),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    producer = Producer({"bootstrap.servers": bootstrap})
    publisher = DeadLetterPublisher(producer, dlt)
    decoded: list[object] = []
    deadline = time.monotonic() + 15
    while len(decoded) < 2 and time.monotonic() < deadline:
        m = consumer.poll(0.1)
        if m is not None and m.error() is None:
            decoded.append((m.key(), m.value()))
            publisher.publish(m, ValueError("handler failed"))
    consumer.close()
    assert decoded == [("schlüssel", {"b": 2, "a": "ü"}), (None, [1, 2])]
    assert producer.flush(10) == 0
    producer.close(timeout=5)
    out = read_all_raw(bootstrap, dlt, 2)
    assert [(m.key(), m.value()) for m in out] == [
        ("schlüssel".encode(), spaced),
        (None, b"[1,  2]"),
    ]
    assert Headers(out[0].headers())[0] == ("h", b"\x00")


def test_a_value_decoded_elsewhere_still_needs_its_consumed_bytes() -> None:
    raw = confluent_kafka.Producer({"bootstrap.servers": "127.0.0.1:9"})
    msg = Message(topic="t", partition=0, offset=3, value=b"x")
    msg.set_value({"a": 1})  # decoded by the application, not by a kheaders consumer
    with pytest.raises(TypeError, match=r"t\[0\]@3.*value=.*never re-serialized"):
        DeadLetterPublisher(raw).publish(msg, ValueError("x"))


def read_all_raw(bootstrap: str, topic: str, n: int) -> list[Message]:
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "dlt-read"})
    c.assign([TopicPartition(topic, 0, 0)])
    out: list[Message] = []
    deadline = time.monotonic() + 15
    try:
        while len(out) < n and time.monotonic() < deadline:
            m = c.poll(0.1)
            if m is not None:
                assert m.error() is None, m.error()
                out.append(m)
    finally:
        c.close()
    assert len(out) == n, f"{len(out)} of {n} on {topic}"
    return out
