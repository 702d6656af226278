"""OpenTelemetry tracing through record headers (W3C Trace Context, strict).

Producer side: :class:`TracingProducerInterceptor` (``propagate`` or ``span`` mode).
Consumer side: :func:`extract` (a record's context), :func:`process_span` (a CONSUMER span
per processed record) and :class:`TracingConsumerInterceptor` (a CLIENT ``poll`` span per
batch, linked to every record). Needs only ``opentelemetry-api``; spans are recorded when
an SDK TracerProvider is installed (globally or passed as ``tracer_provider``).
"""

from __future__ import annotations

from kheaders.interceptors import _public
from kheaders.interceptors._tracing_common import (
    LINK_ONLY_KEY,
    LINK_ONLY_TOPICS_KEY,
    MAX_PENDING_KEY,
    MODE_KEY,
    OVERWRITE_KEY,
    StrictHeadersGetter,
    extract,
    remote_span_context,
)
from kheaders.interceptors._tracing_consumer import TracingConsumerInterceptor, process_span
from kheaders.interceptors._tracing_producer import TracingProducerInterceptor

extract_context = extract
"""Alias of :func:`extract`."""

__all__ = [
    "LINK_ONLY_KEY",
    "LINK_ONLY_TOPICS_KEY",
    "MAX_PENDING_KEY",
    "MODE_KEY",
    "OVERWRITE_KEY",
    "StrictHeadersGetter",
    "TracingConsumerInterceptor",
    "TracingProducerInterceptor",
    "extract",
    "extract_context",
    "process_span",
    "remote_span_context",
]
_public.claim(__name__, globals())
