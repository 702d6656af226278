"""Tracing fixtures: one SDK TracerProvider with an in-memory exporter, passed explicitly.

The global provider is never set (it can be set only once per process); interceptors and
helpers get ``tracer_provider=provider`` instead. Context propagation does not depend on the
provider, so spans started with ``tracer`` are the current context for the interceptors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kheaders import _telemetry


@pytest.fixture(scope="session")
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def finished(exporter: InMemorySpanExporter) -> Iterator[Callable[[], list[ReadableSpan]]]:
    """``finished()``: the spans ended so far in this test (the exporter is cleared around it)."""
    exporter.clear()
    yield lambda: list(exporter.get_finished_spans())
    exporter.clear()


@pytest.fixture(scope="session")
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    yield tp
    tp.shutdown()


@pytest.fixture
def tracer(provider: TracerProvider) -> trace.Tracer:
    return provider.get_tracer("tests")


# -- metrics: a fresh SDK MeterProvider with an in-memory reader per test --------------------


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return InMemoryMetricReader()


@pytest.fixture
def meter_provider(reader: InMemoryMetricReader) -> Iterator[MeterProvider]:
    mp = MeterProvider(metric_readers=[reader])
    yield mp
    mp.shutdown()


@pytest.fixture
def kheaders_counters(meter_provider: MeterProvider) -> Iterator[MeterProvider]:
    """kheaders' own counters go to ``meter_provider`` for the test."""
    _telemetry.use_meter_provider(meter_provider)
    yield meter_provider
    _telemetry.use_meter_provider(None)
