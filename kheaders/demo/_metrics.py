"""The demo's metrics: an SDK MeterProvider for the services, and the summary at the end.

The services name ``kheaders.interceptors.metrics`` in their client configs (by dotted name, like
every interceptor), so the provider is the global one, set once per process. The summary
reads an in-memory reader (counts and the delivery latency histogram, as differences from a
snapshot taken before the services ran) and the last consumer lag a one-second periodic
reader saw before the shipping consumer closed. With ``OTEL_EXPORTER_OTLP_ENDPOINT`` set and
``opentelemetry-exporter-otlp`` importable, the metrics are also exported there over OTLP
(the compose file's collector).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kheaders._errors import ConfigurationError

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics import MeterProvider

SENT = "messaging.client.sent.messages"
CONSUMED = "messaging.client.consumed.messages"
DURATION = "messaging.client.operation.duration"
LAG = "kheaders.librdkafka.consumer.lag"
LAG_STORED = "kheaders.librdkafka.consumer.lag.stored"
_TOPIC = "messaging.destination.name"

Series = tuple[str, tuple[tuple[str, Any], ...]]
"""(instrument, sorted attributes): one time series."""


@dataclass
class Snapshot:
    """Counter totals and histogram buckets per series at one moment."""

    counts: dict[Series, float] = field(default_factory=dict)
    buckets: dict[Series, tuple[tuple[float, ...], tuple[int, ...]]] = field(default_factory=dict)


def _points(data: Any) -> Iterator[tuple[str, Any]]:
    for rm in data.resource_metrics if data is not None else ():
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for point in metric.data.data_points:
                    yield metric.name, point


def _series(name: str, point: Any) -> Series:
    return name, tuple(sorted(dict(point.attributes or {}).items()))


class _LastLag:
    """A metric exporter keeping the last consumer lag points it was given."""

    def __init__(self) -> None:
        self.lag: dict[Series, float] = {}
        self._lock = threading.Lock()

    def keep(self, data: Any) -> None:
        found = {
            _series(name, p): float(p.value)
            for name, p in _points(data)
            if name in (LAG, LAG_STORED)
        }
        if found:
            with self._lock:
                self.lag = found


class DemoMetrics:
    """The demo's MeterProvider and readers (see the module doc)."""

    def __init__(self, provider: MeterProvider, reader: Any, last: _LastLag) -> None:
        self.provider = provider
        self._reader = reader
        self._last = last

    def snapshot(self) -> Snapshot:
        """Counter totals and histogram buckets now."""
        snap = Snapshot()
        for name, point in _points(self._reader.get_metrics_data()):
            key = _series(name, point)
            if name == DURATION:
                snap.buckets[key] = (tuple(point.explicit_bounds), tuple(point.bucket_counts))
            elif name in (SENT, CONSUMED):
                snap.counts[key] = float(point.value)
        return snap

    def summary(
        self, before: Snapshot, producers: dict[str, str], consumers: dict[str, str]
    ) -> list[str]:
        """Lines: records sent and consumed per service (``producers`` and ``consumers`` map
        a topic to the service writing or reading it), delivery latency p50/p99, and the lag
        of each consumed topic at the end."""
        now = self.snapshot()
        totals: dict[tuple[str, str, str], int] = {}  # (instrument, topic, outcome) -> n
        for (name, attrs), value in now.counts.items():
            a = dict(attrs)
            key = (name, str(a.get(_TOPIC, "")), str(a.get("error.type", "")))
            n = int(value - before.counts.get((name, attrs), 0))
            totals[key] = totals.get(key, 0) + n
        sent: dict[str, list[str]] = {}
        consumed: dict[str, list[str]] = {}
        for (name, topic, error), n in sorted(totals.items()):
            outcome = f" failed ({error})" if error else ""
            if n > 0 and name == SENT and topic in producers:
                sent.setdefault(producers[topic], []).append(f"sent {n}{outcome} to {topic}")
            elif n > 0 and name == CONSUMED and topic in consumers:
                consumed.setdefault(consumers[topic], []).append(f"consumed {n} from {topic}")
        lines = [
            f"metrics: {service}: {', '.join(consumed.get(service, []) + sent.get(service, []))}"
            for service in dict.fromkeys([*producers.values(), *consumers.values()])
            if service in sent or service in consumed
        ]
        lines.append(self._latency(before, now, set(producers)))
        for topic, service in consumers.items():
            behind = totals.get((SENT, topic, ""), 0) - totals.get((CONSUMED, topic, ""), 0)
            lines.append(
                f"metrics: {service} lag on {topic} at the end: {behind} records"
                f" (delivered to {topic} minus consumed from it){self._lag(topic)}"
            )
        return lines

    def _latency(self, before: Snapshot, now: Snapshot, topics: set[str]) -> str:
        bounds: tuple[float, ...] = ()
        counts: list[int] = []
        for key, (b, c) in now.buckets.items():
            attrs = dict(key[1])
            if attrs.get("messaging.operation.name") != "send" or attrs.get(_TOPIC) not in topics:
                continue
            old = before.buckets.get(key, (b, (0,) * len(c)))[1]
            delta = [x - y for x, y in zip(c, old, strict=True)]
            bounds = b
            counts = [x + y for x, y in zip(counts, delta, strict=True)] if counts else delta
        total = sum(counts)
        if not total:
            return "metrics: delivery latency: no record timed"
        p50, p99 = (_quantile(bounds, counts, q) for q in (0.5, 0.99))
        return (
            f"metrics: delivery latency p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms"
            f" ({total} records, {DURATION}, interpolated in its buckets)"
        )

    def _lag(self, topic: str) -> str:
        """librdkafka's view of the lag on ``topic``, from the last statistics exported."""
        mine = {k: v for k, v in self._last.lag.items() if dict(k[1]).get(_TOPIC) == topic}
        if not mine:
            return "; librdkafka's statistics came too late to say (every 1 s)"
        stored = int(sum(v for k, v in mine.items() if k[0] == LAG_STORED))
        committed = int(sum(v for k, v in mine.items() if k[0] == LAG))
        return (
            f"; librdkafka's last statistics: {stored} behind the position,"
            f" {committed} behind the committed offsets"
        )


def _quantile(bounds: Sequence[float], counts: Sequence[int], q: float) -> float:
    """The ``q`` quantile of a bucketed histogram, linear within the bucket it falls in.

    >>> round(_quantile([0.01, 0.1], [0, 10, 0], 0.5), 6)
    0.055
    """
    target = q * sum(counts)
    seen = 0
    for i, n in enumerate(counts):
        if n and seen + n >= target:
            low = bounds[i - 1] if i > 0 else 0.0
            high = bounds[i] if i < len(bounds) else bounds[-1] * 2
            return low + (high - low) * (target - seen) / n
        seen += n
    return bounds[-1] if bounds else 0.0


_made: list[DemoMetrics] = []
_made_lock = threading.Lock()


def setup_metrics(service_name: str) -> DemoMetrics | None:
    """The demo's SDK MeterProvider, made global (once per process; later calls return it).

    ``None`` when another SDK MeterProvider is already global (its readers are not ours).
    Raises ConfigurationError when ``opentelemetry-sdk`` is missing (``kheaders[demo]``).
    """
    from opentelemetry import metrics

    with _made_lock:
        if _made:
            return _made[0]
        try:
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import (
                InMemoryMetricReader,
                MetricExporter,
                MetricExportResult,
                PeriodicExportingMetricReader,
            )
            from opentelemetry.sdk.resources import Resource
        except ImportError as exc:
            raise ConfigurationError(
                "the demo needs opentelemetry-sdk: pip install 'kheaders[demo]'"
            ) from exc
        current = metrics.get_meter_provider()
        if not type(current).__module__.startswith("opentelemetry.metrics"):
            return None  # an SDK provider is global already: the services report there
        last = _LastLag()

        class _Keep(MetricExporter):
            def __init__(self) -> None:
                super().__init__()

            def export(self, metrics_data: Any, timeout_millis: float = 10_000, **_: Any) -> Any:
                last.keep(metrics_data)
                return MetricExportResult.SUCCESS

            def force_flush(self, timeout_millis: float = 10_000) -> bool:
                return True

            def shutdown(self, timeout_millis: float = 30_000, **_: Any) -> None:
                return None

        reader = InMemoryMetricReader()
        readers: list[Any] = [reader, PeriodicExportingMetricReader(_Keep(), 1000)]
        if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
            try:  # optional: installed in the Docker image, not a kheaders dependency
                otlp = importlib.import_module(
                    "opentelemetry.exporter.otlp.proto.grpc.metric_exporter"
                )
            except ImportError:
                pass
            else:
                readers.append(PeriodicExportingMetricReader(otlp.OTLPMetricExporter(), 5000))
        provider = MeterProvider(
            resource=Resource.create({"service.name": service_name}), metric_readers=readers
        )
        metrics.set_meter_provider(provider)
        made = DemoMetrics(provider, reader, last)
        _made.append(made)
        return made
