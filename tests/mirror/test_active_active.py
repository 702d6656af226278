"""Active-active: A -> B and B -> A over the same topic names, 1,000 records produced on each.

Each cluster's topic ends with every record exactly once (its own, and the other's copies);
copies keep key, value, timestamp, partition and headers byte for byte (the producer's
traceparent included), and carry the origin and hops headers; the mirrors skip (count as
``looped``) the copies they would send back. The A -> B mirror also reports to an SDK: its
batch spans link the records' traceparent, its counters and lag gauge are exported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kheaders import Producer
from kheaders.interceptors.message_id import MessageIdInterceptor
from kheaders.mirror import (
    HOPS,
    MESSAGE_ID,
    ORIGIN_CLUSTER,
    ORIGIN_OFFSET,
    ORIGIN_PARTITION,
    ORIGIN_TOPIC,
    Mirror,
)
from tests.mirror.conftest import CLUSTER_B, fast_group, read_all, running, wait_for

pytestmark = pytest.mark.integration

N = 1000
TRACEPARENT = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def _produce(bootstrap: str, topic: str, side: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap}, interceptors=[MessageIdInterceptor()])
    for i in range(N):
        producer.produce(
            topic,
            value=f"{side}-value-{i}".encode(),
            key=f"{side}-{i}".encode(),
            partition=i % 2,
            timestamp=1_700_000_000_000 + i,
            headers=[("dup", b"1"), ("nul", None), ("dup", b"2"), ("traceparent", TRACEPARENT)],
        )
    producer.flush(30)
    producer.close()


def _by_id(messages: list[Any]) -> dict[bytes, list[Any]]:
    out: dict[bytes, list[Any]] = {}
    for msg in messages:
        ids = [v for k, v in msg.headers() or [] if k == MESSAGE_ID]
        assert len(ids) == 1
        assert ids[0] is not None
        out.setdefault(ids[0], []).append(msg)
    return out


def _observed(spans: InMemorySpanExporter, reader: InMemoryMetricReader, a_id: str) -> None:
    """The A -> B mirror's batch spans link every record's traceparent (never replacing it);
    its counters count by route and outcome; its lag gauge reports each source partition."""
    mine = [s for s in spans.get_finished_spans() if s.name == f"mirror {a_id} -> {CLUSTER_B}"]
    links = [link for s in mine for link in s.links]
    assert len(links) == 2 * N  # its own records, and the copies it skipped
    assert {format(link.context.trace_id, "032x") for link in links} == {TRACEPARENT[3:35].decode()}
    assert {format(link.context.span_id, "016x") for link in links} == {TRACEPARENT[36:52].decode()}
    data = reader.get_metrics_data()
    assert data is not None
    points: dict[str, list[Any]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points.setdefault(metric.name, []).extend(metric.data.data_points)
    by_outcome = {
        (p.attributes["kheaders.mirror.route"], p.attributes["kheaders.mirror.outcome"]): p.value
        for p in points["kheaders.mirror.records"]
    }
    assert by_outcome == {("default", "sent"): N, ("loop", "looped"): N}
    lag = {
        p.attributes["messaging.destination.partition.id"] for p in points["kheaders.mirror.lag"]
    }
    assert lag == {"0", "1"}


def _cluster_id(bootstrap: str) -> str:
    return str(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).cluster_id)


def test_each_cluster_holds_every_record_once_with_its_provenance(
    bootstrap: str, cluster_b: str, both_topics: Callable[..., str]
) -> None:
    topic = both_topics(partitions=2)
    a_id, b_id = _cluster_id(bootstrap), CLUSTER_B
    _produce(bootstrap, topic, "a")
    _produce(cluster_b, topic, "b")
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    meters = MeterProvider(metric_readers=[reader])
    a_to_b = Mirror(
        {"bootstrap.servers": bootstrap, "group.id": "aa-ab", **fast_group()},
        cluster_b,
        [topic],
        meter_provider=meters,
        tracer_provider=tracing,
        commit_interval=0.2,
    )
    b_to_a = Mirror(
        {"bootstrap.servers": cluster_b, "group.id": "aa-ba", **fast_group()}, bootstrap, [topic]
    )
    with running(a_to_b), running(b_to_a):
        for mirror in (a_to_b, b_to_a):
            wait_for(
                lambda m=mirror: (
                    m.stats.total("looped") == N  # type: ignore[misc]
                    and m.stats.total("sent") == N
                ),
                what="each mirror copied its side and skipped the other's copies",
            )
        wait_for(lambda: len(a_to_b.stats.lag) == 2, what="the lag of both partitions")
    _observed(spans, reader, a_id)
    on_a = _by_id(read_all(bootstrap, topic, 2 * N))
    on_b = _by_id(read_all(cluster_b, topic, 2 * N))
    assert len(on_a) == len(on_b) == 2 * N
    assert all(len(copies) == 1 for copies in (*on_a.values(), *on_b.values()))
    assert a_to_b.stats.total("looped") == b_to_a.stats.total("looped") == N
    for home, away, home_id, away_id in ((on_a, on_b, a_id, b_id), (on_b, on_a, b_id, a_id)):
        originals = {
            mid: m[0] for mid, m in home.items() if ORIGIN_CLUSTER not in dict(m[0].headers())
        }
        assert len(originals) == N
        for mid, original in originals.items():
            copy = away[mid][0]
            assert (copy.key(), copy.value()) == (original.key(), original.value())
            assert copy.timestamp() == original.timestamp()
            assert copy.partition() == original.partition()
            written = original.headers()
            copied = copy.headers()
            assert copied[: len(written)] == written  # order, duplicates, null values, traceparent
            assert copied[len(written) :] == [
                (ORIGIN_CLUSTER, home_id.encode()),
                (ORIGIN_TOPIC, topic.encode()),
                (ORIGIN_PARTITION, str(original.partition()).encode()),
                (ORIGIN_OFFSET, str(original.offset()).encode()),
                (HOPS, f"{home_id},{away_id}".encode()),
            ]
