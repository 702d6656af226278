"""What the tracing interceptors share: attribute names, strict extraction, propagator facts."""

from __future__ import annotations

import functools
from collections.abc import Mapping

from opentelemetry import propagate, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.context import Context
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.propagators.textmap import Getter, TextMapPropagator
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, TraceState
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from kheaders import Header, Headers, __version__
from kheaders.tracecontext import extract_trace_parent, extract_trace_state, format_tracestate

MODE_KEY = "kheaders.tracing.mode"
OVERWRITE_KEY = "kheaders.tracing.overwrite"
MAX_PENDING_KEY = "kheaders.tracing.max.pending.spans"
LINK_ONLY_KEY = "kheaders.tracing.link.only"
LINK_ONLY_TOPICS_KEY = "kheaders.tracing.link.only.topics"
CONFIG_KEYS = (MODE_KEY, OVERWRITE_KEY, MAX_PENDING_KEY, LINK_ONLY_KEY, LINK_ONLY_TOPICS_KEY)
"""The tracing settings; both tracing interceptors declare them all, so one config can serve
a producer and a consumer."""

INSTRUMENTATION_NAME = "kheaders.interceptors"
INSTRUMENTATION_VERSION = __version__
SCHEMA_URL = "https://opentelemetry.io/schemas/1.28.0"

# OpenTelemetry messaging semantic conventions (stable names as of semconv 1.28+).
MESSAGING_SYSTEM = "messaging.system"
OPERATION_NAME = "messaging.operation.name"
OPERATION_TYPE = "messaging.operation.type"
DESTINATION_NAME = "messaging.destination.name"
PARTITION_ID = "messaging.destination.partition.id"
MESSAGE_KEY = "messaging.kafka.message.key"
OFFSET = "messaging.kafka.offset"
CLIENT_ID = "messaging.client.id"
CONSUMER_GROUP = "messaging.consumer.group.name"
BATCH_COUNT = "messaging.batch.message_count"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

Attributes = dict[str, str | int]
"""Span attributes as the interceptors build them."""

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
BAGGAGE = "baggage"
_TRACE_FIELDS = frozenset({TRACEPARENT, TRACESTATE})


def get_tracer(tracer_provider: trace.TracerProvider | None) -> trace.Tracer:
    """The interceptors' tracer from ``tracer_provider`` (the global one when ``None``)."""
    return trace.get_tracer(
        INSTRUMENTATION_NAME,
        INSTRUMENTATION_VERSION,
        tracer_provider=tracer_provider,
        schema_url=SCHEMA_URL,
    )


def is_w3c_only(propagator: TextMapPropagator) -> bool:
    """True when ``propagator`` writes only W3C trace context and W3C baggage.

    Then trace headers can be formatted straight from a span context (same text as the
    propagator writes), and other fields depend on the context's baggage alone.
    """
    if isinstance(propagator, CompositePropagator):
        members = propagator._propagators
    else:
        members = [propagator]
    return all(type(p) in (TraceContextTextMapPropagator, W3CBaggagePropagator) for p in members)


def propagator_fields(propagator: TextMapPropagator) -> frozenset[str]:
    """The header keys ``propagator`` writes (trace context keys always included)."""
    try:
        fields = set(propagator.fields)
    except Exception:  # a third-party propagator may not implement fields
        fields = set()
    return frozenset(fields | _TRACE_FIELDS)


def inject_pairs(propagator: TextMapPropagator, context: Context) -> tuple[Header, ...]:
    """What ``propagator`` injects for ``context``, as header pairs (UTF-8 values)."""
    carrier: dict[str, str] = {}
    propagator.inject(carrier, context=context)
    return tuple(Header(k, v.encode("utf-8")) for k, v in carrier.items())


def replace_fields(
    headers: Headers, fields: frozenset[str], pairs: tuple[Header, ...], present: bool = True
) -> None:
    """Remove every header whose key is in ``fields``, then append ``pairs`` (no duplicates).

    ``present=False``: the caller has just seen that none of ``fields`` is there.
    """
    if present and headers:  # a record's first headers are often these: nothing to look for
        for key in {h[0] for h in headers if h[0] in fields}:
            headers.remove(key)
    for pair in pairs:
        headers.add(pair)


def message_headers(source: object) -> Headers:
    """The headers of a confluent ``Message``, a kheaders ``Headers`` or a list of pairs.

    ``None`` (a record without headers) gives empty headers. Raises TypeError for other
    objects.
    """
    if type(source) is Headers:
        return source
    if source is None:
        return Headers()
    if callable(getattr(source, "headers", None)):
        return Headers.from_message(source)  # guarded: DeserializationError if unreadable
    if isinstance(source, list | tuple | Mapping):
        return Headers(source)
    raise TypeError(f"expected a Message or Headers, got {type(source).__name__}")


def key_text(key: object) -> str | None:
    """A record key as text for ``messaging.kafka.message.key``, or ``None`` if not text."""
    if isinstance(key, str):
        return key
    if isinstance(key, bytes):
        try:
            return key.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


def w3c_span_context(headers: Headers) -> SpanContext | None:
    """The record's remote creation context by the strict W3C rules, or ``None``."""
    tp = extract_trace_parent(headers)
    if tp is None:
        return None
    members = extract_trace_state(headers) if TRACESTATE in headers else None
    return SpanContext(
        trace_id=tp.trace_id,
        span_id=tp.parent_id,
        is_remote=True,
        trace_flags=TraceFlags(tp.flags),
        trace_state=TraceState(members) if members else None,
    )


class StrictHeadersGetter(Getter[Headers]):
    """An OTel getter over Headers that applies the strict W3C rules to the trace fields.

    ``traceparent`` is given only when exactly one valid header is present (in canonical
    form); ``tracestate`` only then, with invalid members dropped and limits applied.
    Other keys give their values decoded as UTF-8 (undecodable bytes replaced).
    """

    def get(self, carrier: Headers, key: str) -> list[str] | None:
        if key == TRACEPARENT:
            tp = extract_trace_parent(carrier)
            return None if tp is None else [tp.header()]
        if key == TRACESTATE:
            members = extract_trace_state(carrier)
            return [format_tracestate(members)] if members else None
        values = [v.decode("utf-8", "replace") for v in carrier.values(key) if v is not None]
        return values or None

    def keys(self, carrier: Headers) -> list[str]:
        return carrier.keys()


STRICT_GETTER = StrictHeadersGetter()


def extract(
    source: object,
    context: Context | None = None,
    propagator: TextMapPropagator | None = None,
) -> Context:
    """The context a record carries (its creation context and baggage), strict W3C rules.

    ``source`` is a confluent ``Message`` (as kheaders.Consumer or confluent-kafka returns
    it), a ``Headers`` or a list of pairs. The result is built on ``context`` (an empty
    context when ``None``, so the current span never leaks in). Two ``traceparent`` headers
    or an invalid one give a context without a parent span, and ``tracestate`` is then
    ignored. The configured global propagator is used unless ``propagator`` is given.
    Never raises on bad header content; raises TypeError only for an unsupported ``source``.
    """
    headers = message_headers(source)
    base = Context() if context is None else context
    prop = propagate.get_global_textmap() if propagator is None else propagator
    baggage = _w3c_members(prop)
    try:
        if baggage is None:
            return prop.extract(headers, context=base, getter=STRICT_GETTER)
        # W3C only: the trace context parsed once, here; baggage only when there is some
        sc = w3c_span_context(headers)
        ctx = base if sc is None else trace.set_span_in_context(NonRecordingSpan(sc), base)
        for member in baggage if BAGGAGE in headers else ():
            ctx = member.extract(headers, context=ctx, getter=STRICT_GETTER)
        return ctx
    except Exception:  # a third-party propagator failing on hostile input: no parent
        return base


@functools.lru_cache(maxsize=8)
def _w3c_members(propagator: TextMapPropagator) -> tuple[TextMapPropagator, ...] | None:
    """For a W3C-only propagator, its baggage propagators (maybe none); otherwise ``None``.

    Then extraction gives what the propagator would (OTel's trace-context propagator builds
    the same remote span context from the strict getter's canonical ``traceparent``), with
    the header parsed once instead of once per getter call, and baggage read only when a
    record has it.
    """
    if not is_w3c_only(propagator):
        return None
    if isinstance(propagator, CompositePropagator):
        members = propagator._propagators
    else:
        members = [propagator]
    return tuple(p for p in members if type(p) is W3CBaggagePropagator)


def remote_span_context(
    headers: Headers, propagator: TextMapPropagator | None = None
) -> SpanContext | None:
    """The record's creation span context (valid), or ``None``; never raises on content."""
    prop = propagate.get_global_textmap() if propagator is None else propagator
    if is_w3c_only(prop):
        return w3c_span_context(headers)
    sc = trace.get_current_span(extract(headers, propagator=prop)).get_span_context()
    return sc if sc.is_valid else None
