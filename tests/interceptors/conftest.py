"""Tracing fixtures: one SDK TracerProvider with an in-memory exporter, passed explicitly.

The global provider is never set (it can be set only once per process); interceptors and
helpers get ``tracer_provider=provider`` instead. Context propagation does not depend on the
provider, so spans started with ``tracer`` are the current context for the interceptors.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@pytest.fixture(scope="session")
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture(scope="session")
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    yield tp
    tp.shutdown()


@pytest.fixture
def tracer(provider: TracerProvider) -> trace.Tracer:
    return provider.get_tracer("tests")
