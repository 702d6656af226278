"""CloudEventInterceptor and the serializers named in a client config."""

from __future__ import annotations

import doctest
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from confluent_kafka import TopicPartition

import kheaders.interceptors.cloudevents as module
from kheaders import ConfigurationError, Consumer, Producer, ProducerRecord
from kheaders.cloudevents import Event
from kheaders.interceptors.cloudevents import CloudEventInterceptor


def test_docstring_examples_run() -> None:
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


def configured(**config: object) -> CloudEventInterceptor:
    icpt = CloudEventInterceptor()
    icpt.configure(config)
    return icpt


def test_source_and_type_come_from_config_and_per_topic_settings() -> None:
    icpt = configured(
        **{
            "kheaders.cloudevents.source": "/shop",
            "kheaders.cloudevents.type": "shop.event",
            "kheaders.cloudevents.topic.billing.v1.type": "invoice.created",
        }
    )
    billing = icpt.on_send(ProducerRecord("billing.v1", {"n": 1})).value
    other = icpt.on_send(ProducerRecord("orders", {"n": 2})).value
    assert (billing.source, billing.type) == ("/shop", "invoice.created")
    assert (other.source, other.type) == ("/shop", "shop.event")


def test_id_is_the_message_id_header_else_a_fresh_uuid() -> None:
    icpt = CloudEventInterceptor("/s", "t")
    assert icpt.on_send(ProducerRecord("x", 1, headers=[("message-id", b"m-7")])).value.id == "m-7"
    fresh = icpt.on_send(ProducerRecord("x", 1)).value.id
    assert uuid.UUID(fresh).version == 4
    not_utf8 = icpt.on_send(ProducerRecord("x", 1, headers=[("message-id", b"\xff")])).value.id
    assert uuid.UUID(not_utf8).version == 4
    other = CloudEventInterceptor("/s", "t", id_header="msg")
    assert other.on_send(ProducerRecord("x", 1, headers=[("msg", b"a")])).value.id == "a"


def test_time_is_the_record_timestamp() -> None:
    record = ProducerRecord("x", 1, timestamp=1_700_000_000_123)
    event = CloudEventInterceptor("/s", "t").on_send(record).value
    assert event.time == datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)


def test_events_pass_unchanged_and_partitionkey_keys_records_only_when_asked() -> None:
    event = Event.create("t", "/s", partitionkey="pk")
    assert CloudEventInterceptor("/a", "b").on_send(ProducerRecord("x", event)).value is event
    assert CloudEventInterceptor("/a", "b").on_send(ProducerRecord("x", event)).key is None
    keyed = configured(**{"kheaders.cloudevents.partitionkey": "true"})
    assert keyed.on_send(ProducerRecord("x", event)).key == "pk"
    assert keyed.on_send(ProducerRecord("x", event, key=b"mine")).key == b"mine"


def test_a_topic_without_source_or_type_is_refused_naming_it() -> None:
    with pytest.raises(ConfigurationError, match="'orders'"):
        CloudEventInterceptor().on_send(ProducerRecord("orders", 1))
    with pytest.raises(ConfigurationError, match=r"kheaders\.cloudevents\.topic\.x\.subject"):
        configured(**{"kheaders.cloudevents.topic.x.subject": "s"})


@pytest.mark.integration
@pytest.mark.parametrize("serializer", ["CloudEventSerializer", "StructuredCloudEventSerializer"])
def test_plain_records_become_events_from_config_alone(
    bootstrap: str, topic: str, serializer: str
) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "interceptor.classes": "kheaders.interceptors.cloudevents.CloudEventInterceptor",
            "value.serializer": f"kheaders.cloudevents.{serializer}",
            "kheaders.cloudevents.source": "/billing",
            f"kheaders.cloudevents.topic.{topic}.type": "invoice.created",
        }
    )
    producer.produce(
        topic, {"amount": 7}, headers=[("message-id", b"m-1")], timestamp=1_700_000_000_000
    )
    producer.produce(topic, None, key=b"k")  # a plain tombstone stays one in binary mode
    assert producer.flush(30) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "ce-config",
            "value.deserializer": "kheaders.cloudevents.CloudEventDeserializer",
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    deadline = time.monotonic() + 30
    while len(got) < 2 and time.monotonic() < deadline:
        got.extend(consumer.consume(2, 0.5))
    consumer.close()
    event = got[0].value()
    assert (event.id, event.source, event.type, event.data) == (
        "m-1",
        "/billing",
        "invoice.created",
        {"amount": 7},
    )
    assert event.time == datetime.fromtimestamp(1_700_000_000, UTC)
    assert got[1].value().data is None
