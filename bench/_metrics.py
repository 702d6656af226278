"""Metrics groups: kheaders.Producer with and without ``MetricsProducerInterceptor``.

Two workloads, each with the same contenders in one run:

- ``metrics:sync`` (the target): synchronous produce, each record produced and then
  ``flush()``ed before the next (the record is acknowledged before ``produce`` returns to
  the loop), as a service does that must know each record landed;
- ``metrics:stream``: the produce groups' loop (``produce`` all, one ``flush()``),
  for the cost of the per-record acknowledgement path the interceptor needs.

Contenders: ``kheaders`` (no metrics interceptor: the baseline); ``kheaders + on_delivery``
(a per-record delivery callback counting deliveries, what an application does to see
failures); ``kheaders + on_acknowledgement`` (an interceptor whose only hook,
``on_acknowledgement``, does nothing: the acknowledgement path any per-record interceptor
takes, so ``metrics + SDK`` against it is the metrics interceptor's own cost);
``metrics, no provider`` (the interceptor under the API's no-op provider: left out of the
chain); ``metrics + SDK``
(an SDK MeterProvider with a periodic reader exporting every second to a discarding
exporter, plus an in-memory reader read after the run to check that the sent count equals
the records). Each sample also carries ``cpu_us``: process CPU time of the timed section
per record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    InMemoryMetricReader,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)

from bench._model import Contender, Env, Group, Sample, Target
from bench._produce import Produce, _retry, _run_producer_cpu, loop_fixed
from bench._workload import Workload

SENT = "messaging.client.sent.messages"


class _Discard(MetricExporter):
    """An exporter that keeps only the number of exports (the collection cost is real)."""

    def __init__(self) -> None:
        super().__init__(preferred_temporality={}, preferred_aggregation={})
        self.exports = 0

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        self.exports += 1
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None


class _NoOpAcknowledgement:
    """An interceptor with one hook that does nothing: the acknowledgement path alone."""

    def on_acknowledgement(self, metadata: object, error: object, headers: object) -> None:
        return None


def loop_sync(produce: Produce, poll: Callable[[float], object], topic: str, w: Workload) -> None:
    """Each record produced, then flushed (acknowledged) before the next one."""
    flush = poll.__self__.flush  # type: ignore[attr-defined]  # the producer's, beside poll
    for k, v, h in zip(w.keys, w.values, w.headers, strict=True):
        try:
            produce(topic, value=v, key=k, headers=h)
        except BufferError:
            _retry(poll, produce, topic=topic, value=v, key=k, headers=h)
        flush(30)


def _sent_total(reader: InMemoryMetricReader) -> int:
    data = reader.get_metrics_data()
    total = 0
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == SENT:
                    total += sum(int(p.value) for p in metric.data.data_points)  # type: ignore[union-attr]
    return total


def _contenders(
    env: Env, loop: Callable[..., None], with_callback: bool
) -> tuple[list[Contender], Callable[[], None]]:
    from kheaders import Producer
    from kheaders.interceptors.metrics import MetricsProducerInterceptor

    cfg = env.producer_config()
    exporter = _Discard()
    periodic = PeriodicExportingMetricReader(exporter, export_interval_millis=1000)
    checker = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[periodic, checker])
    state = {"before": 0}

    def run(
        make: Callable[[], Any], n: int, check: Callable[[Sample], None] | None = None
    ) -> Sample:
        return _run_producer_cpu(env, make, loop, n, check)

    def plain(n: int) -> Sample:
        return run(lambda: Producer(cfg), n)

    def callback(n: int) -> Sample:
        delivered = [0]

        def on_delivery(err: object, _msg: object) -> None:
            if err is None:
                delivered[0] += 1

        def make() -> Any:
            return Producer({**cfg, "on_delivery": on_delivery})

        sample = run(make, n)
        if delivered[0] != n:
            raise RuntimeError(f"{delivered[0]} delivery callbacks for {n} records")
        return sample

    def acknowledged(n: int) -> Sample:
        def make() -> Any:
            return Producer(cfg, interceptors=[_NoOpAcknowledgement()])

        return run(make, n)

    def noop(n: int) -> Sample:
        def make() -> Any:
            icpt = MetricsProducerInterceptor(meter_provider=NoOpMeterProvider())
            return Producer(cfg, interceptors=[icpt])

        return run(make, n)

    def sdk(n: int) -> Sample:
        state["before"] = _sent_total(checker)

        def check(sample: Sample) -> None:
            sent = _sent_total(checker) - state["before"]
            sample.extra["sent_counted"] = sent
            if sent != n:
                raise RuntimeError(f"{SENT} counted {sent} records of {n}")

        def make() -> Any:
            icpt = MetricsProducerInterceptor(meter_provider=provider)
            icpt.configure(cfg)
            return Producer(cfg, interceptors=[icpt])

        return run(make, n, check)

    contenders = [Contender("kheaders", plain)]
    if with_callback:
        contenders.append(Contender("kheaders + on_delivery", callback))
    contenders.append(Contender("kheaders + on_acknowledgement", acknowledged))
    contenders += [Contender("metrics, no provider", noop), Contender("metrics + SDK", sdk)]
    return contenders, provider.shutdown


def metrics_groups(env: Env) -> list[Group]:
    """Target: synchronous produce with metrics + SDK >= 0.9x the same without the interceptor."""
    groups: list[Group] = []
    sync_count = max(env.records // 100, 200)
    contenders, close = _contenders(env, loop_sync, with_callback=True)
    groups.append(
        Group(
            name="metrics:sync",
            title="Produce synchronously (flush per record), metrics interceptor",
            baseline="kheaders",
            contenders=contenders,
            targets=[
                Target(
                    "7a. sync produce: metrics + SDK >= 0.9x without",
                    "metrics + SDK",
                    "kheaders",
                    ">=",
                    0.9,
                )
            ],
            count=sync_count,
            warmup=max(sync_count // 10, 20),
            close=close,
        )
    )
    contenders, close = _contenders(env, loop_fixed, with_callback=True)
    groups.append(
        Group(
            name="metrics:stream",
            title="Produce loop + one flush, metrics interceptor (per-record acknowledgement)",
            baseline="kheaders",
            contenders=contenders,
            targets=[
                Target(
                    "7b. stream: metrics + SDK >= 0.9x a delivery callback",
                    "metrics + SDK",
                    "kheaders + on_delivery",
                    ">=",
                    0.9,
                )
            ],
            count=env.records,
            warmup=max(env.records // 10, 2000),
            close=close,
        )
    )
    return groups
