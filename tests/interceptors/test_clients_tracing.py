"""kheaders.Producer/Consumer running the project's tracing interceptors over a real broker."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import TopicPartition
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kheaders import Consumer, Producer
from kheaders.interceptors.tracing import TracingConsumerInterceptor, TracingProducerInterceptor

pytestmark = pytest.mark.integration


def test_send_span_is_ended_by_the_acknowledgement_and_poll_span_links_to_it(
    bootstrap: str, topic: str
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    sender = TracingProducerInterceptor(tracer_provider=provider, mode="span")
    with Producer({"bootstrap.servers": bootstrap}, interceptors=[sender]) as producer:
        producer.produce(topic, b"v", b"k", headers=[("app", b"1")])
        assert producer.flush(10) == 0
        assert sender.pending_spans == 0  # on_acknowledgement ended it

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "trace-e2e"},
        interceptors=[TracingConsumerInterceptor(tracer_provider=provider)],
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    deadline = time.monotonic() + 15
    msg = None
    while msg is None and time.monotonic() < deadline:
        msg = consumer.poll(0.1)
    consumer.close()
    assert msg is not None

    spans = {s.name: s for s in exporter.get_finished_spans()}
    send, poll = spans[f"send {topic}"], spans[f"poll {topic}"]
    assert send.attributes is not None
    assert send.attributes["messaging.kafka.offset"] == 0
    assert [link.context.span_id for link in poll.links] == [send.context.span_id]
    trace_id = f"{send.context.trace_id:032x}"
    assert msg.headers().keys()[0] == "app"
    assert trace_id in (msg.headers().last_value("traceparent") or b"").decode()
    provider.shutdown()
