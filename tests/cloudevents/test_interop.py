"""Both ways with the CloudEvents SDK's own Kafka binding, through a real broker.

kheaders writes, the SDK (``cloudevents.core.bindings.kafka.from_kafka``) reads what a raw
confluent-kafka consumer received; the SDK writes (``to_binary``/``to_structured``, sent by
a raw confluent-kafka producer), kheaders reads. Binary and structured, with and without
data, with extensions.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import TopicPartition

from kheaders import (
    CloudEventError,
    Consumer,
    DeserializationError,
    Producer,
    SerializationError,
)
from kheaders.aio import AIOConsumer, AIOProducer
from kheaders.cloudevents import CloudEventDeserializer, CloudEventSerializer, Event

kafka = pytest.importorskip("cloudevents.core.bindings.kafka")
JSONFormat = pytest.importorskip("cloudevents.core.formats.json").JSONFormat
SdkEvent = pytest.importorskip("cloudevents.core.v1.event").CloudEvent

pytestmark = pytest.mark.integration
TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def sdk_events() -> list[Any]:
    """Events both sides must agree on: JSON data, bytes data, no data, extensions."""
    at = datetime(2026, 11, 25, 21, 30, 0, 123456, tzinfo=UTC)
    base = {"source": "/mycontext/subcontext", "type": "com.example.someevent", "time": at}
    return [
        SdkEvent({**base, "id": "json", "datacontenttype": "application/json"}, {"a": [1, "é"]}),
        SdkEvent(
            {**base, "id": "bytes", "datacontenttype": "application/octet-stream"}, b"\xff\x00\x01"
        ),
        SdkEvent({**base, "id": "none"}),
        SdkEvent(
            {
                **base,
                "id": "ext",
                "subject": "s-1",
                "comexampleext": "v",
                "traceparent": TP,
                "datacontenttype": "application/json",
            },
            {"n": 1},
        ),
    ]


def same(sdk: Any, event: Any) -> None:
    """``event`` (SDK or kheaders) holds exactly ``sdk``'s attributes and data."""
    attributes = event.get_attributes() if hasattr(event, "get_attributes") else event.attributes
    data = event.get_data() if hasattr(event, "get_data") else event.data
    assert dict(attributes) == sdk.get_attributes()
    assert data == sdk.get_data()


def raw_read(bootstrap: str, topic: str, count: int) -> list[Any]:
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "ce-raw", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    deadline = time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        got.extend(m for m in consumer.consume(count, 0.5) if m.error() is None)
    consumer.close()
    assert len(got) == count, f"read {len(got)} of {count}"
    return got


def kheaders_read(bootstrap: str, topic: str, count: int, **kw: Any) -> list[Any]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "ce-kh", "enable.auto.commit": False},
        value_deserializer=CloudEventDeserializer(**kw),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    deadline = time.monotonic() + 30
    while len(got) < count and time.monotonic() < deadline:
        got.extend(consumer.consume(count, 0.5))
    consumer.close()
    assert len(got) == count, f"read {len(got)} of {count}"
    return got


def as_sdk_message(msg: Any) -> Any:
    headers = {k: v for k, v in (msg.headers() or [])}
    return kafka.KafkaMessage(headers=headers, key=msg.key(), value=msg.value())


@pytest.mark.parametrize("mode", ["binary", "structured"])
def test_records_kheaders_writes_decode_in_the_sdk_to_equal_events(
    bootstrap: str, topic: str, mode: str
) -> None:
    events = sdk_events()
    producer = Producer(
        {"bootstrap.servers": bootstrap}, value_serializer=CloudEventSerializer(mode)
    )  # type: ignore[arg-type]
    for event in events:
        producer.produce(topic, event)
    assert producer.flush(30) == 0
    records = raw_read(bootstrap, topic, len(events))
    for sent, record in zip(events, records, strict=True):
        if mode == "binary" and sent.get_data() is None:
            assert record.value() is None  # a tombstone, not the SDK's b""
        same(sent, kafka.from_kafka(as_sdk_message(record), JSONFormat()))


@pytest.mark.parametrize("mode", ["binary", "structured"])
def test_records_the_sdk_writes_decode_in_kheaders_to_equal_events(
    bootstrap: str, topic: str, mode: str
) -> None:
    events = sdk_events()
    write = kafka.to_binary if mode == "binary" else kafka.to_structured
    raw = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for event in events:
        message = write(event, JSONFormat())
        raw.produce(
            topic, value=message.value, key=message.key, headers=list(message.headers.items())
        )
    assert raw.flush(30) == 0
    records = kheaders_read(bootstrap, topic, len(events))
    for sent, record in zip(events, records, strict=True):
        same(sent, record.value())
    # and as the SDK's own events, through event_factory
    again = kheaders_read(bootstrap, topic, len(events), event_factory=SdkEvent)
    for sent, record in zip(events, again, strict=True):
        same(sent, record.value())


def test_a_data_less_binary_event_reaches_a_compacted_topic_as_a_tombstone(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    """Tansu does not compact: the null value arriving as null is what is asserted."""
    topic = topic_factory(config={"cleanup.policy": "compact"})
    producer = Producer({"bootstrap.servers": bootstrap}, value_serializer=CloudEventSerializer())
    producer.produce(topic, Event.create("order.deleted", "/orders", id="d-1"), key=b"order-7")
    assert producer.flush(30) == 0
    (record,) = raw_read(bootstrap, topic, 1)
    assert (record.key(), record.value()) == (b"order-7", None)
    assert dict(record.headers())["ce_id"] == b"d-1"
    (event,) = kheaders_read(bootstrap, topic, 1)
    assert event.value().id == "d-1"
    assert event.value().data is None


def test_the_user_key_is_the_record_key_partitionkey_stays_an_attribute(
    bootstrap: str, topic: str
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap}, value_serializer=CloudEventSerializer())
    event = Event.create("t", "/s", b"x", partitionkey="pk-1", datacontenttype="text/plain")
    producer.produce(topic, event, key=b"user-key")
    assert producer.flush(30) == 0
    (record,) = raw_read(bootstrap, topic, 1)
    assert record.key() == b"user-key"
    assert dict(record.headers())["ce_partitionkey"] == b"pk-1"


def test_the_async_clients_write_events_the_sdk_reads_and_read_the_sdks(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    events = sdk_events()
    mine, theirs = topic_factory(), topic_factory()
    raw = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for event in events:
        message = kafka.to_binary(event, JSONFormat())
        raw.produce(theirs, value=message.value, headers=list(message.headers.items()))
    assert raw.flush(30) == 0

    async def run() -> list[Any]:
        producer = AIOProducer(
            {"bootstrap.servers": bootstrap}, value_serializer=CloudEventSerializer("structured")
        )
        futures = [await producer.produce(mine, event) for event in events]
        await asyncio.wait_for(asyncio.gather(*futures), 30)
        await producer.close()
        consumer = AIOConsumer(
            {"bootstrap.servers": bootstrap, "group.id": "ce-aio"},
            value_deserializer=CloudEventDeserializer(),
        )
        await consumer.assign([TopicPartition(theirs, 0, 0)])
        got: list[Any] = []
        deadline = time.monotonic() + 30
        while len(got) < len(events) and time.monotonic() < deadline:
            got.extend(await consumer.consume(len(events), 0.5))
        await consumer.close()
        return got

    read = asyncio.run(run())
    for sent, record in zip(events, raw_read(bootstrap, mine, len(events)), strict=True):
        same(sent, kafka.from_kafka(as_sdk_message(record), JSONFormat()))
    for sent, record in zip(events, read, strict=True):
        same(sent, record.value())


def test_invalid_events_fail_their_record_only_with_the_cause_chained(
    bootstrap: str, topic: str
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap}, value_serializer=CloudEventSerializer())
    with pytest.raises(SerializationError) as sent:
        producer.produce(topic, {"specversion": "1.0", "id": "1", "source": "/s"})
    assert isinstance(sent.value.__cause__, CloudEventError)
    assert sent.value.__cause__.attribute == "type"
    raw = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    raw.produce(topic, value=b"x", headers=[("ce_id", b"1"), ("ce_id", b"2")])
    raw.produce(
        topic,
        value=None,
        headers=[
            ("ce_specversion", b"1.0"),
            ("ce_id", b"2"),
            ("ce_source", b"/s"),
            ("ce_type", b"t"),
        ],
    )
    assert raw.flush(30) == 0
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "ce-bad"},
        value_deserializer=CloudEventDeserializer(),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    failures: list[DeserializationError] = []
    good: list[Any] = []
    deadline = time.monotonic() + 30
    while len(failures) + len(good) < 2 and time.monotonic() < deadline:
        try:
            good.extend(consumer.consume(2, 0.5))
        except DeserializationError as exc:
            failures.append(exc)
    consumer.close()
    (failure,) = failures
    assert isinstance(failure.__cause__, CloudEventError)
    assert failure.__cause__.attribute == "id"
    assert failure.message.value() == b"x"  # the raw record, for a dead-letter topic
    assert [m.value().id for m in good] == ["2"]
