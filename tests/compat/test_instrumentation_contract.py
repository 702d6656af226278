"""opentelemetry-instrumentation-confluent-kafka on top of each flavour of client.

Auto-instrumentation (``ConfluentKafkaInstrumentor().instrument()``, which swaps
``confluent_kafka.Producer``/``Consumer`` for its subclasses) and manual instrumentation
(``instrument_producer``/``instrument_consumer`` proxies) must give the same result as on
plain confluent-kafka: one send span per record, and its context in a ``traceparent`` header
that the consumer side continues.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, TopicPartition
from opentelemetry.instrumentation.confluent_kafka import ConfluentKafkaInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.compat.conftest import build_consumer, build_producer, read
from tests.compat.differences import contract

pytestmark = pytest.mark.integration


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _traceparent(msg: Any) -> str:
    """The record's traceparent without its flags (the SDK may set W3C level 2's random bit)."""
    values = [v for k, v in (msg.headers() or []) if k == "traceparent"]
    assert len(values) == 1, msg.headers()
    return bytes(values[0]).decode()[:-3]


def _check(producer: Any, consumer: Any, exporter: InMemorySpanExporter, topic: str) -> None:
    producer.produce(topic=topic, value=b"v", key=b"k")
    producer.produce(topic, b"positional-value")  # no headers argument at all
    assert producer.flush(10) == 0
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    records = read(consumer, 2)
    consumer.poll(0.1)  # ends the last process span
    consumer.close()
    sends = [s for s in exporter.get_finished_spans() if s.name == f"{topic} send"]
    assert len(sends) == 2
    for msg, send in zip(records, sends, strict=True):
        context = send.get_span_context()
        assert _traceparent(msg) == f"00-{context.trace_id:032x}-{context.span_id:016x}"
    process = [s for s in exporter.get_finished_spans() if s.name == f"{topic} process"]
    linked = {link.context.span_id for s in process for link in s.links}
    assert linked == {s.context.span_id for s in sends}  # the consumer side continues them


def test_auto_instrumentation_beneath(
    flavour: str,
    spans: Any,
    producer_config: dict[str, Any],
    consumer_config: dict[str, Any],
    topic: str,
) -> None:
    """instrument() first, then the client: kheaders builds on the instrumented classes."""
    provider, exporter = spans
    instrumentor = ConfluentKafkaInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with contract("auto_instrumentation", flavour):
            producer = build_producer(flavour, producer_config)
            consumer = build_consumer(flavour, consumer_config)
            _check(producer, consumer, exporter, topic)
    finally:
        instrumentor.uninstrument()


def test_manual_instrumentation_on_top(
    flavour: str,
    spans: Any,
    producer_config: dict[str, Any],
    consumer_config: dict[str, Any],
    topic: str,
) -> None:
    provider, exporter = spans
    with contract("manual_instrumentation", flavour):
        producer = ConfluentKafkaInstrumentor.instrument_producer(
            build_producer(flavour, producer_config), tracer_provider=provider
        )
        consumer = ConfluentKafkaInstrumentor.instrument_consumer(
            build_consumer(flavour, consumer_config), tracer_provider=provider
        )
        producer.produce(topic=topic, value=b"v", key=b"k")
        producer.produce(topic=topic, value=b"w")
        assert producer.flush(10) == 0
        consumer.subscribe([topic])  # the proxy forwards subscribe, not assign
        records = read(consumer, 2, timeout=30)
        consumer.close()
        sends = [s for s in exporter.get_finished_spans() if s.name == f"{topic} send"]
        assert len(sends) == 2
        for msg, send in zip(records, sends, strict=True):
            context = send.get_span_context()
            assert _traceparent(msg) == f"00-{context.trace_id:032x}-{context.span_id:016x}"
