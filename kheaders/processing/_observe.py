"""What a processor tells: a process span per record, its duration, counters, log events.

* span ``process <topic>`` (CONSUMER) per record, linked to the context in the record's
  ``traceparent`` (a retried record keeps its headers, so every attempt links the original);
  attributes: ``messaging.system``, ``messaging.destination.name``,
  ``messaging.destination.partition.id``, ``messaging.kafka.offset``,
  ``messaging.consumer.group.name``, ``kheaders.attempt``.
* histogram ``messaging.process.duration`` (s) per record [``messaging.destination.name``].
* counters ``kheaders.processing.failures`` (handler or deserializer failures),
  ``kheaders.processing.retries``, ``kheaders.processing.dead_letters`` (acknowledged
  publications) and ``kheaders.processing.publish.failures`` ``{record}``
  [``messaging.destination.name``: the topic the record was read from].
* structlog events (``kheaders.processing``) with topic, partition, offset and attempt; never
  a key or value.

Spans and the histogram cost nothing while no SDK provider is set (checked once per batch);
failure counters and events happen on failure paths only.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kheaders._log import get_logger

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

log = get_logger("kheaders.processing")

FAILURES = "kheaders.processing.failures"
RETRIES = "kheaders.processing.retries"
DEAD_LETTERS = "kheaders.processing.dead_letters"
PUBLISH_FAILURES = "kheaders.processing.publish.failures"
DURATION = "messaging.process.duration"


class _HeaderGetter:
    """opentelemetry's text-map getter over a record's ``(key, bytes)`` pairs."""

    def get(self, carrier: Sequence[tuple[str, bytes | None]], key: str) -> list[str] | None:
        found = [v.decode("latin-1") for k, v in carrier if k.lower() == key and v is not None]
        return found or None

    def keys(self, carrier: Sequence[tuple[str, bytes | None]]) -> list[str]:
        return [k for k, _ in carrier]


_GETTER = _HeaderGetter()


def _sdk_set(provider: object) -> bool:
    name = type(provider).__name__
    return name not in {
        "ProxyTracerProvider",
        "NoOpTracerProvider",
        "_ProxyMeterProvider",
        "NoOpMeterProvider",
    }


class Observer:
    """Spans, the duration histogram and failure counters of one processor."""

    def __init__(
        self,
        group: str | None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self.group = group
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self._tracer: Any = None
        self._histogram: Any = None
        self._counters: dict[str, Any] = {}
        self.active = False
        """Whether spans or the histogram are recorded now (see :meth:`refresh`)."""

    def refresh(self) -> bool:
        """Look (once per batch) whether a tracer or meter provider with an SDK is set."""
        from opentelemetry import metrics, trace

        tp = self._tracer_provider or trace.get_tracer_provider()
        mp = self._meter_provider or metrics.get_meter_provider()
        tracing, metering = _sdk_set(tp), _sdk_set(mp)
        if tracing and self._tracer is None:
            self._tracer = trace.get_tracer("kheaders.processing", tracer_provider=tp)
        if metering and self._histogram is None:
            meter = metrics.get_meter("kheaders.processing", meter_provider=mp)
            self._histogram = meter.create_histogram(
                DURATION, unit="s", description="Duration of processing one record."
            )
        self._tracing, self._metering = tracing, metering
        self.active = tracing or metering
        return self.active

    @contextmanager
    def processing(
        self, topic: str, partition: int, offset: int, attempt: int, headers: Sequence[Any]
    ) -> Iterator[None]:
        """Span and duration around handling one record (only while :attr:`active`)."""
        start = time.perf_counter()
        span = None
        if self._tracing:
            span = self._start_span(topic, partition, offset, attempt, headers)
        try:
            yield
        except BaseException as exc:
            if span is not None:
                from opentelemetry.trace import Status, StatusCode

                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))
            raise
        finally:
            if span is not None:
                span.end()
            if self._metering:
                self._histogram.record(
                    time.perf_counter() - start, {"messaging.destination.name": topic}
                )

    def _start_span(
        self, topic: str, partition: int, offset: int, attempt: int, headers: Sequence[Any]
    ) -> Any:
        from opentelemetry import propagate, trace

        links = []
        if headers:
            try:
                ctx = propagate.extract(headers, getter=_GETTER)  # type: ignore[arg-type]
                sc = trace.get_current_span(ctx).get_span_context()
                if sc.is_valid:
                    links.append(trace.Link(sc))
            except Exception:  # a malformed carrier never fails a record
                links = []
        attributes: dict[str, Any] = {
            "messaging.system": "kafka",
            "messaging.operation.type": "process",
            "messaging.destination.name": topic,
            "messaging.destination.partition.id": str(partition),
            "messaging.kafka.offset": offset,
            "kheaders.attempt": attempt,
        }
        if self.group:
            attributes["messaging.consumer.group.name"] = self.group
        return self._tracer.start_span(
            f"process {topic}", kind=trace.SpanKind.CONSUMER, links=links, attributes=attributes
        )

    def count(self, name: str, topic: str) -> None:
        """Add one to ``name`` for ``topic``; never raises."""
        try:
            counter = self._counters.get(name)
            if counter is None:
                from opentelemetry import metrics

                provider = self._meter_provider
                meter = metrics.get_meter("kheaders.processing", meter_provider=provider)
                counter = self._counters[name] = meter.create_counter(name, unit="{record}")
            counter.add(1, {"messaging.destination.name": topic})
        except Exception:  # telemetry never breaks processing
            return
