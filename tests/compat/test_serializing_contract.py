"""Wrapping confluent-kafka's SerializingProducer and DeserializingConsumer.

Their contract (keyword ``produce(topic, key=, value=, headers=)``, serializers seeing the
topic and field, deserialized ``key()``/``value()``) must hold through ``wrap_producer`` /
``wrap_consumer`` as it holds on the confluent objects themselves.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    DeserializingConsumer,
    SerializingProducer,
    TopicPartition,
)
from confluent_kafka.serialization import StringDeserializer, StringSerializer

import kheaders
from tests.compat.conftest import read
from tests.compat.differences import contract

pytestmark = pytest.mark.integration

WRAPS = ("confluent", "wrapped")


@pytest.fixture(params=WRAPS)
def wrap_flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_serializing_producer(
    wrap_flavour: str, producer_config: dict[str, Any], consumer_config: dict[str, Any], topic: str
) -> None:
    raw = SerializingProducer(
        {
            **producer_config,
            "key.serializer": StringSerializer(),
            "value.serializer": StringSerializer(),
        }
    )
    producer = kheaders.wrap_producer(raw) if wrap_flavour == "wrapped" else raw
    delivered: list[object] = []
    with contract("serializing_producer", wrap_flavour):
        producer.produce(
            topic,
            key="k-1",
            value="v-1",
            headers=[("h", b"1")],
            on_delivery=lambda e, m: delivered.append(e),
        )
        producer.produce(topic, value="v-2")
        producer.poll(0)
        assert producer.flush(10) == 0
        assert delivered == [None]
        consumer = DeserializingConsumer(
            {
                **consumer_config,
                "key.deserializer": StringDeserializer(),
                "value.deserializer": StringDeserializer(),
            }
        )
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        first, second = read(consumer, 2)
        consumer.close()
        assert (first.key(), first.value(), first.headers()) == ("k-1", "v-1", [("h", b"1")])
        assert (second.key(), second.value()) == (None, "v-2")


def test_deserializing_consumer(
    wrap_flavour: str, consumer_config: dict[str, Any], topic: str, seed: Any
) -> None:
    seed(topic, {"key": b"k", "value": "välue".encode(), "headers": [("h", b"1")]})
    raw = DeserializingConsumer(
        {
            **consumer_config,
            "key.deserializer": StringDeserializer(),
            "value.deserializer": StringDeserializer(),
        }
    )
    consumer = kheaders.wrap_consumer(raw) if wrap_flavour == "wrapped" else raw
    with contract("deserializing_consumer", wrap_flavour):
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        (msg,) = read(consumer, 1)
        assert (msg.key(), msg.value()) == ("k", "välue")
        assert msg.headers() == [("h", b"1")]
        consumer.close()
