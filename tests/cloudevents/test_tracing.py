"""The Distributed Tracing extension beside kheaders' tracing interceptor, on the broker."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import TopicPartition
from opentelemetry.sdk.trace import TracerProvider

from kheaders import Consumer, Producer
from kheaders.cloudevents import CloudEventDeserializer, CloudEventSerializer, Event
from kheaders.interceptors.tracing import TracingProducerInterceptor
from kheaders.tracecontext import parse_traceparent

pytestmark = pytest.mark.integration
STARTED = "00-0af7651916cd43dd8448eb211c80319c-b9c7c989f97918e1-01"


def test_extension_and_trace_headers_fill_each_other_through_the_tracing_interceptor(
    bootstrap: str, topic: str
) -> None:
    provider = TracerProvider()
    tracing = TracingProducerInterceptor(tracer_provider=provider, mode="span")
    producer = Producer(
        {"bootstrap.servers": bootstrap},
        interceptors=[tracing],
        value_serializer=CloudEventSerializer(),
    )
    producer.produce(topic, Event.create("t", "/s", id="first-hop"))
    producer.produce(topic, Event.create("t", "/s", id="relayed", traceparent=STARTED))
    assert producer.flush(30) == 0
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "ce-trace"},
        value_deserializer=CloudEventDeserializer(),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    deadline = time.monotonic() + 30
    while len(got) < 2 and time.monotonic() < deadline:
        got.extend(consumer.consume(2, 0.5))
    consumer.close()
    provider.shutdown()
    first, relayed = got
    hop = first.headers().last_value("traceparent")
    assert parse_traceparent(hop) is not None  # the interceptor's send span
    # single hop: the event's starting trace is the record's own
    assert first.headers().last_value("ce_traceparent") == hop
    assert first.value()["traceparent"] == hop.decode()
    # relayed: the event keeps the trace it started in; the record carries this hop's
    assert relayed.headers().last_value("ce_traceparent") == STARTED.encode()
    assert relayed.headers().last_value("traceparent") != STARTED.encode()
    assert relayed.value()["traceparent"] == STARTED
