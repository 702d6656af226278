"""The mirror's own span: one per batch copied, linked to each record's ``traceparent``.

The records' ``traceparent`` headers are copied as their producer wrote them (the far
consumer continues the producer's trace); the mirror never injects its own context. Its span
(``mirror {source} -> {target}``, kind CONSUMER) links the creation context of every record
of the batch, as the messaging conventions advise for batch receive; a batch gets a span per
128 records when tracing records (the SDK's default limit of links per span). Without an SDK
the span is a no-op and the headers are not even read for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanContext, SpanKind, TraceFlags, Tracer, TracerProvider

from kheaders._model.traceparent import parse_traceparent

TRACEPARENT = "traceparent"


def tracer_of(provider: TracerProvider | None) -> Tracer:
    """The mirror's tracer from ``provider`` (``None``: the global provider)."""
    return trace.get_tracer("kheaders.mirror", tracer_provider=provider)


def start_batch_span(tracer: Tracer, source_id: str, target_id: str, batch: Sequence[Any]) -> Span:
    """The span of one batch (end it once the batch is handed to the target producer)."""
    span = tracer.start_span(
        f"mirror {source_id} -> {target_id}",
        kind=SpanKind.CONSUMER,
        attributes={
            "messaging.system": "kafka",
            "messaging.operation.type": "process",
            "messaging.batch.message_count": len(batch),
        },
    )
    return span


def link_record(span: Span, msg: Any, headers: Sequence[tuple[str, bytes | None]]) -> None:
    """Link ``span`` to the record's ``traceparent`` (its first value), when valid."""
    value = next((v for k, v in headers if k == TRACEPARENT), None)
    parent = parse_traceparent(value)
    if parent is None:
        return
    context = SpanContext(parent.trace_id, parent.parent_id, True, TraceFlags(parent.flags))
    span.add_link(
        context,
        {
            "messaging.destination.name": msg.topic(),
            "messaging.destination.partition.id": str(msg.partition()),
            "messaging.kafka.offset": msg.offset(),
        },
    )
