"""The demo's services in-process: spans parented across the hop, bad orders dead-lettered."""

from __future__ import annotations

from collections.abc import Callable

import confluent_kafka
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from kheaders import Headers
from kheaders.broker import create_topic
from kheaders.demo import audit, audit_record, produce_orders, read_topics, run_shipping
from kheaders.tracecontext import extract_trace_parent


def _provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_shipment_continues_the_orders_trace_under_its_process_span(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    orders, shipments = topic_factory(), topic_factory()
    provider, exporter = _provider()
    sent = produce_orders(bootstrap, 3, topic=orders, tracer_provider=provider)
    assert (sent.produced, sent.failed) == (3, 0)
    stats = run_shipping(
        bootstrap,
        expected=3,
        timeout=60,
        orders_topic=orders,
        shipments_topic=shipments,
        group_id=f"g-{orders}",
        tracer_provider=provider,
    )
    assert (stats.consumed, stats.produced, stats.failed, stats.dead_lettered) == (3, 3, 0, 0)
    spans = exporter.get_finished_spans()
    created = {s.context.span_id: s for s in spans if s.name == "create order"}
    processed = [s for s in spans if s.name == f"process {orders}"]
    assert len(created) == 3
    assert len(processed) == 3
    for span in processed:
        assert span.kind is SpanKind.CONSUMER
        assert span.parent is not None
        assert span.parent.span_id in created  # child of the order's own span
    by_trace = {s.context.trace_id: s for s in processed}
    records = read_topics(bootstrap, {orders: 3, shipments: 3}, timeout=30)
    for msg in records:
        parent = extract_trace_parent(Headers(msg.headers()))
        assert parent is not None
        assert parent.trace_id in by_trace  # one trace across both hops
        if msg.topic() == shipments:
            assert parent.parent_id == by_trace[parent.trace_id].context.span_id


def test_an_order_that_is_not_json_is_dead_lettered_not_lost(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    orders, shipments = topic_factory(), topic_factory()
    create_topic(bootstrap, f"{orders}-dlt")
    produce_orders(bootstrap, 2, topic=orders)
    raw = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    raw.produce(orders, b"{not json", b"order-bad", headers=[("client.id", b"rogue")])
    assert raw.flush(15) == 0
    stats = run_shipping(
        bootstrap,
        expected=3,
        timeout=60,
        orders_topic=orders,
        shipments_topic=shipments,
        group_id=f"g-{orders}",
    )
    assert (stats.consumed, stats.produced, stats.dead_lettered) == (3, 2, 1)
    [dead] = read_topics(bootstrap, {f"{orders}-dlt": 1}, timeout=30)
    assert dead.value() == b"{not json"
    headers = Headers(dead.headers())
    assert headers.last_value("client.id") == b"rogue"
    assert headers.last_value("kheaders.dlt.original.topic") == orders.encode()


def test_the_audit_keeps_a_record_with_unreadable_headers_and_calls_its_trace_broken(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    kafka = pytest.importorskip("kafka", reason="kafka-python is in the dev extra")

    class RawKey(str):  # kafka-python writes a header key as ``key.encode()``
        def encode(self, *args: object, **kwargs: object) -> bytes:  # type: ignore[override]
            return b"\xff\xfe"

    orders, shipments = topic_factory(), topic_factory()
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(orders, key=b"k1", value=b"{}", headers=[(RawKey("k"), b"x")]).get(10)
    producer.close()
    records = read_topics(bootstrap, {orders: 1, shipments: 0}, timeout=30)
    assert [(m.topic(), m.offset()) for m in records] == [(orders, 0)]
    report = audit((audit_record(m) for m in records), orders, shipments)
    assert f"{orders}[0]@0: no valid traceparent (trace broken)" in report.problems
