"""The compatibility suite's clients: plain confluent-kafka, and kheaders in both modes.

Every check runs with each *flavour* of client a user could have in hand:

* ``confluent``: ``confluent_kafka.Producer``/``Consumer`` themselves (the contract);
* ``kheaders``: ``kheaders.Producer``/``Consumer`` built from the same config;
* ``wrapped``: ``kheaders.wrap_producer``/``wrap_consumer`` around a confluent instance.

Checks that are about the class itself (constructor shapes, subclassing) run with the two
classes only: a wrapper is built from an instance, never from a config.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import OFFSET_BEGINNING, Message, TopicPartition

import kheaders

FLAVOURS = ("confluent", "kheaders", "wrapped")
PRODUCER_PATHS = ("acknowledging", "intercepted")
"""kheaders producers whose interceptors make them take the other produce paths
(kheaders._client.sending): one that only acknowledges, one whose ``on_send`` sees each record
(and leaves it as it is). ``kheaders`` and ``wrapped`` take the plain path."""
PRODUCER_FLAVOURS = (*FLAVOURS, *PRODUCER_PATHS)
CLASSES = ("confluent", "kheaders")

# Tansu joins a group in ~3 s with these (23 s with librdkafka's defaults); FIELD-NOTES
FAST_GROUP = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}


def producer_class(flavour: str) -> type[Any]:
    """The class a user of this flavour names (``wrapped`` has none)."""
    return confluent_kafka.Producer if flavour == "confluent" else kheaders.Producer


def consumer_class(flavour: str) -> type[Any]:
    return confluent_kafka.Consumer if flavour == "confluent" else kheaders.Consumer


class _Acknowledging:
    def on_acknowledgement(self, metadata: Any, error: Any, headers: Any) -> None:
        pass


class _Intercepting(_Acknowledging):
    def on_send(self, record: Any) -> Any:
        return record


def build_producer(flavour: str, config: dict[str, Any], **kwargs: Any) -> Any:
    """A producer of ``flavour`` from ``config`` (``kwargs`` go to the constructor)."""
    if flavour in PRODUCER_PATHS:
        interceptor = _Acknowledging() if flavour == "acknowledging" else _Intercepting()
        return kheaders.Producer(config, interceptors=[interceptor], **kwargs)
    if flavour == "wrapped":
        return kheaders.wrap_producer(confluent_kafka.Producer(config, **kwargs))
    return producer_class(flavour)(config, **kwargs)


def build_consumer(flavour: str, config: dict[str, Any], **kwargs: Any) -> Any:
    if flavour == "wrapped":
        return kheaders.wrap_consumer(confluent_kafka.Consumer(config, **kwargs))
    return consumer_class(flavour)(config, **kwargs)


@pytest.fixture(params=FLAVOURS)
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=PRODUCER_FLAVOURS)
def producer_flavour(request: pytest.FixtureRequest) -> str:
    """A producer of each flavour, and kheaders' producers on each produce path."""
    return str(request.param)


@pytest.fixture(params=CLASSES)
def class_flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def producer_config(bootstrap: str) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "linger.ms": 0}


@pytest.fixture
def consumer_config(bootstrap: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": f"compat-{request.node.name[:40]}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        **FAST_GROUP,
    }


@pytest.fixture
def seed(bootstrap: str) -> Callable[..., None]:
    """``seed(topic, *records)``: produce dicts of produce() keywords with plain confluent."""

    def produce(topic: str, *records: dict[str, Any]) -> None:
        producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        for record in records:
            producer.produce(topic, **record)
        assert producer.flush(15) == 0

    return produce


def read(consumer: Any, count: int, timeout: float = 30.0) -> list[Message]:
    """Poll ``consumer`` until ``count`` records came (error events are skipped)."""
    import time

    out: list[Message] = []
    deadline = time.monotonic() + timeout
    while len(out) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            out.append(msg)
    assert len(out) == count, f"read {len(out)} of {count} records in {timeout} s"
    return out


@pytest.fixture
def reader(bootstrap: str) -> Iterator[Callable[..., list[Message]]]:
    """``reader(topic, count)``: records read back with plain confluent (assign, no group)."""
    opened: list[confluent_kafka.Consumer] = []

    def read_back(topic: str, count: int, partition: int = 0, **config: Any) -> list[Message]:
        consumer = confluent_kafka.Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "compat-reader", **config}
        )
        opened.append(consumer)
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        return read(consumer, count)

    yield read_back
    for consumer in opened:
        consumer.close()
