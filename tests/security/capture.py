"""Everything a secret could leak into, captured: stdlib log records (librdkafka's lines
included, through ``logger=``), structlog events, OpenTelemetry spans and metric points, and
whatever text a test adds (reprs, error messages)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from structlog.testing import capture_logs

LIBRDKAFKA_DEBUG = "security,broker,conf,protocol,generic,cgrp,topic,msg"
"""librdkafka's debug contexts turned on: its configuration dump and its SASL exchange."""


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        self.lines.append(f"{record.name} {record.levelname} {text}")


class Capture:
    """One test's captured output; :meth:`text` is all of it as one string."""

    def __init__(self) -> None:
        self.records = _Records()
        self.events: list[dict[str, Any]] = []
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.metrics = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.metrics])
        self.librdkafka = logging.getLogger("tests.security.librdkafka")
        self.extra: list[str] = []

    def client_logging(self) -> dict[str, object]:
        """Settings that send a client's librdkafka lines, debug included, to the capture."""
        return {"logger": self.librdkafka, "debug": LIBRDKAFKA_DEBUG}

    def add(self, *texts: object) -> None:
        """Text to search too: reprs, error messages."""
        self.extra.extend(str(t) for t in texts)

    def span_attributes(self) -> list[dict[str, Any]]:
        """Every finished span's attributes (events' and links' included)."""
        out = []
        for span in self.spans.get_finished_spans():
            out.append(dict(span.attributes or {}))
            out.extend(dict(e.attributes or {}) for e in span.events)
            out.extend(dict(link.attributes or {}) for link in span.links)
        return out

    def metric_json(self) -> str:
        data = self.metrics.get_metrics_data()
        return "" if data is None else data.to_json()

    def text(self) -> str:
        spans = [span.to_json() for span in self.spans.get_finished_spans()]
        return "\n".join(
            [
                *self.records.lines,
                json.dumps(self.events, default=repr),
                *spans,
                self.metric_json(),
                *self.extra,
            ]
        )


@contextmanager
def capturing() -> Iterator[Capture]:
    """A :class:`Capture` of everything logged, traced and measured inside the block."""
    capture = Capture()
    root = logging.getLogger()
    level = root.level
    root.addHandler(capture.records)
    root.setLevel(logging.DEBUG)
    try:
        with capture_logs() as events:
            capture.events = events
            yield capture
    finally:
        root.removeHandler(capture.records)
        root.setLevel(level)
