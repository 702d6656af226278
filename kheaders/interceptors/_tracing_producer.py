"""TracingProducerInterceptor: W3C trace context into record headers, optionally a span each."""

from __future__ import annotations

from collections.abc import Callable

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode, TraceState

from kheaders import ConfigurationError, Header, Headers, ProducerRecord, RecordMetadata
from kheaders.interceptors._config import (
    Config,
    get_bool,
    get_choice,
    get_int,
    get_str,
    server_address,
)
from kheaders.interceptors._tracing_common import (
    CLIENT_ID,
    CONFIG_KEYS,
    DESTINATION_NAME,
    ERROR_TYPE,
    MAX_PENDING_KEY,
    MESSAGE_KEY,
    MESSAGING_SYSTEM,
    MODE_KEY,
    OFFSET,
    OPERATION_NAME,
    OPERATION_TYPE,
    OVERWRITE_KEY,
    PARTITION_ID,
    SERVER_ADDRESS,
    SERVER_PORT,
    TRACEPARENT,
    TRACESTATE,
    Attributes,
    get_tracer,
    inject_pairs,
    is_w3c_only,
    key_text,
    propagator_fields,
    replace_fields,
    w3c_span_context,
)

MODES = ("propagate", "span")
_global_textmap = propagate.get_global_textmap
_current_context = otel_context.get_current
DEFAULT_MAX_PENDING = 100_000
_MAX_TOPICS = 1024
_NO_ACK = "kheaders.no_acknowledgement"
_TRACE_FIELDS = frozenset({TRACEPARENT, TRACESTATE})
_NO_LINKS: tuple[Link, ...] = ()
_PARTITION_TEXT = {p: str(p) for p in range(256)}
"""``messaging.destination.partition.id`` is a string: the usual ones made once."""

_PropState = tuple[TextMapPropagator, frozenset[str], bool]
_CtxCache = tuple[Context, TextMapPropagator, tuple[Header, ...], tuple[Header, ...]]


def _error_type(error: BaseException | object) -> str:
    name = getattr(error, "name", None)
    if callable(name):  # confluent_kafka.KafkaError: "_MSG_TIMED_OUT", "TOPIC_AUTHORIZATION_FAILED"
        return str(name())
    return type(error).__qualname__


class TracingProducerInterceptor:
    """Producer interceptor writing the W3C trace context (OTel's global propagator) to headers.

    ``mode="propagate"`` (default) injects the current context with no span of its own;
    the encoded headers are cached while the current context does not change.
    ``mode="span"`` starts one PRODUCER span ``send {topic}`` per record (messaging
    semantic conventions), injects it, and ends it on acknowledgement, so its duration is
    the delivery latency; a failed send sets error status and ``error.type``. Without an
    SDK (a no-op tracer) it propagates the current context, as ``propagate`` does.

    Existing ``traceparent``/``tracestate`` (and the propagator's other fields) are replaced,
    never duplicated, except that a record that already carries a valid creation context
    keeps it unless ``overwrite=True`` (a ``span``-mode send span then links to it).

    Config keys (when named in ``interceptor.classes``; constructor arguments win):
    ``kheaders.tracing.mode`` (``propagate``|``span``), ``kheaders.tracing.overwrite``
    (bool), ``kheaders.tracing.max.pending.spans`` (int: spans awaiting acknowledgement
    beyond this end early as not acknowledged); ``client.id`` and ``bootstrap.servers`` feed
    span attributes. Raises ConfigurationError for a bad mode or value.
    """

    __slots__ = (
        "_attrs",
        "_client_id",
        "_ctx_cache",
        "_max_pending",
        "_mode",
        "_overwrite",
        "_pending",
        "_pending_headers",
        "_prop_state",
        "_propagator",
        "_provider",
        "_server",
        "_settings",
        "_tracer",
        "_ts_cache",
    )
    config_keys = CONFIG_KEYS
    """The client settings it reads (kheaders routes them to it, never to librdkafka)."""

    def __init__(
        self,
        mode: str | None = None,
        *,
        overwrite: bool | None = None,
        tracer_provider: trace.TracerProvider | None = None,
        propagator: TextMapPropagator | None = None,
        max_pending: int | None = None,
    ) -> None:
        if mode is not None and mode not in MODES:
            raise ConfigurationError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
        if max_pending is not None and max_pending < 1:
            raise ConfigurationError(f"max_pending: must be >= 1, got {max_pending}")
        self._settings = (mode, overwrite, max_pending)
        self._mode = mode or "propagate"
        self._overwrite = bool(overwrite)
        self._max_pending = max_pending or DEFAULT_MAX_PENDING
        self._provider = tracer_provider
        self._tracer = get_tracer(tracer_provider)
        self._propagator = propagator
        self._client_id: str | None = None
        self._server: tuple[str, int | None] | None = None
        self._attrs: dict[str, tuple[str, Attributes]] = {}
        self._prop_state: _PropState | None = None
        self._ctx_cache: _CtxCache | None = None
        self._ts_cache: tuple[TraceState, bytes] | None = None
        # span mode, keyed by id(headers): the span, and the headers (kept alive so their id
        # stays unique until acknowledged). Two dicts rather than one of pairs: no tuple per
        # record in flight for the garbage collector to traverse.
        self._pending: dict[int, Span] = {}
        self._pending_headers: dict[int, Headers] = {}

    @property
    def mode(self) -> str:
        """``"propagate"`` or ``"span"``."""
        return self._mode

    def configure(self, config: Config) -> None:
        """Read settings from the client config (explicit constructor arguments win).

        Raises ConfigurationError naming the key at fault.
        """
        mode, overwrite, max_pending = self._settings
        if mode is None:
            self._mode = get_choice(config, MODE_KEY, "propagate", MODES)
        if overwrite is None:
            self._overwrite = get_bool(config, OVERWRITE_KEY, False)
        if max_pending is None:
            self._max_pending = get_int(config, MAX_PENDING_KEY, DEFAULT_MAX_PENDING, 1)
        self._client_id = get_str(config, "client.id")
        self._server = server_address(config)
        self._attrs = {}
        # the global provider may have been installed since construction: skip the proxy
        self._tracer = get_tracer(self._provider)

    # -- helpers ------------------------------------------------------------------------------

    def _propagator_state(self) -> _PropState:
        prop = self._propagator or propagate.get_global_textmap()
        state = self._prop_state
        if state is None or state[0] is not prop:
            state = self._prop_state = (prop, propagator_fields(prop), is_w3c_only(prop))
        return state

    def _context_cache(self, ctx: Context, prop: TextMapPropagator) -> _CtxCache:
        """What ``prop`` injects for ``ctx``: all pairs, and those other than trace context."""
        cache = self._ctx_cache
        if cache is None or cache[0] is not ctx or cache[1] is not prop:
            pairs = inject_pairs(prop, ctx)
            others = tuple(p for p in pairs if p[0] not in _TRACE_FIELDS)
            cache = self._ctx_cache = (ctx, prop, pairs, others)
        return cache

    def _topic(self, topic: str) -> tuple[str, Attributes]:
        """The span name and the attributes every send span to ``topic`` starts with (cached).

        The SDK copies the attributes it is given, so a record adding none (no key, no
        partition) passes this dict as it is.
        """
        attrs: Attributes = {
            MESSAGING_SYSTEM: "kafka",
            OPERATION_NAME: "send",
            OPERATION_TYPE: "send",
            DESTINATION_NAME: topic,
        }
        if self._client_id:
            attrs[CLIENT_ID] = self._client_id
        if self._server is not None:
            attrs[SERVER_ADDRESS] = self._server[0]
            if self._server[1] is not None:
                attrs[SERVER_PORT] = self._server[1]
        if len(self._attrs) >= _MAX_TOPICS:
            self._attrs = {}
        found = self._attrs[topic] = (f"send {topic}", attrs)
        return found

    def _tracestate(self, ts: TraceState) -> bytes:
        cache = self._ts_cache
        if cache is None or cache[0] is not ts:
            cache = self._ts_cache = (ts, ts.to_header().encode("ascii"))
        return cache[1]

    # -- hooks ----------------------------------------------------------------------------------

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        """Write the trace context into ``record.headers`` (a read-only one is copied first)."""
        headers = record.headers
        if headers.read_only:
            headers = record.headers = headers.copy()
        if self._mode == "span":
            self._send_span(record, headers)
            return record
        # propagate: the per-record path is a few identity checks and one add per field
        # while the propagator and the current context stay the same (the usual case)
        prop = self._propagator or _global_textmap()
        state = self._prop_state
        if state is None or state[0] is not prop:
            state = self._propagator_state()
        present = headers and _any_key(headers, state[1])
        if present and not self._overwrite and w3c_span_context(headers) is not None:
            return record  # the record keeps its creation context
        ctx = _current_context()
        cache = self._ctx_cache
        if cache is None or cache[0] is not ctx or cache[1] is not prop:
            cache = self._context_cache(ctx, prop)
        if present:
            replace_fields(headers, state[1], cache[2])
            return record
        for pair in cache[2]:
            headers.add(pair)
        return record

    def _send_span(self, record: ProducerRecord, headers: Headers) -> None:
        prop = self._propagator or _global_textmap()
        state = self._prop_state
        if state is None or state[0] is not prop:
            state = self._propagator_state()
        fields = state[1]
        present = _any_key(headers, fields)
        creation = w3c_span_context(headers) if present and not self._overwrite else None
        topic = record.topic
        found = self._attrs.get(topic)
        name, attrs = found if found is not None else self._topic(topic)
        key = record.key
        partition = record.partition
        if key is not None:
            text = key_text(key)
            if text is not None:
                attrs = {**attrs, MESSAGE_KEY: text}
        if partition is not None and partition >= 0:
            attrs = {**attrs, PARTITION_ID: _PARTITION_TEXT.get(partition) or str(partition)}
        parent = _current_context()
        span = self._tracer.start_span(
            name,
            context=parent,
            kind=SpanKind.PRODUCER,
            attributes=attrs,
            links=_NO_LINKS if creation is None else (Link(creation),),
        )
        if creation is None:
            sc = span.get_span_context()
            if not sc.is_valid:  # no SDK (a no-op tracer): propagate the current context
                replace_fields(headers, fields, self._context_cache(parent, prop)[2], present)
            elif state[2]:  # W3C only: the headers formatted from the span context
                traceparent = Header(
                    TRACEPARENT, b"00-%032x-%016x-%02x" % (sc.trace_id, sc.span_id, sc.trace_flags)
                )
                cache = self._ctx_cache
                if cache is None or cache[0] is not parent or cache[1] is not prop:
                    cache = self._context_cache(parent, prop)
                others = cache[3]
                if others or sc.trace_state:
                    pairs = [*others, traceparent]
                    if sc.trace_state:
                        pairs.append(Header(TRACESTATE, self._tracestate(sc.trace_state)))
                    replace_fields(headers, fields, tuple(pairs), present)
                elif present:
                    replace_fields(headers, fields, (traceparent,))
                else:  # the usual case: no trace headers yet, no baggage, no tracestate
                    headers.add(traceparent)
            else:
                ctx = trace.set_span_in_context(span, parent)
                replace_fields(headers, fields, inject_pairs(prop, ctx), present)
        pending = self._pending
        key = id(headers)
        pending[key] = span
        self._pending_headers[key] = headers
        if len(pending) > self._max_pending:
            self._evict_oldest()

    def _evict_oldest(self) -> None:
        try:
            oldest = next(iter(self._pending))
        except (StopIteration, RuntimeError):  # emptied or changed by another thread
            return
        span = self._pending.pop(oldest, None)
        self._pending_headers.pop(oldest, None)
        if span is not None:
            _end_unacknowledged(span)

    @property
    def on_acknowledgement(self) -> Callable[[RecordMetadata, object, Headers], None]:
        """The acknowledgement hook, present in ``span`` mode only.

        In ``propagate`` mode there is nothing to do on acknowledgement, so the attribute is
        absent (``AttributeError``) and the producer needs no per-record delivery callback.
        """
        if self._mode != "span":
            raise AttributeError("on_acknowledgement: only in span mode")
        return self._acknowledge

    def _acknowledge(
        self, metadata: RecordMetadata, error: BaseException | object | None, headers: Headers
    ) -> None:
        """End the record's send span (span mode): partition, offset, error status."""
        key = id(headers)
        span = self._pending.pop(key, None)
        if span is None:
            return
        if self._pending_headers.pop(key, None) is not headers:  # stale: its headers are gone
            _end_unacknowledged(span)
            return
        # one by one: a dict would go through the SDK's Sequence and Mapping ABC checks
        partition = metadata.partition
        if partition >= 0:
            span.set_attribute(PARTITION_ID, _PARTITION_TEXT.get(partition) or str(partition))
        if metadata.offset >= 0:
            span.set_attribute(OFFSET, metadata.offset)
        if error is not None:
            span.set_attribute(ERROR_TYPE, _error_type(error))
            span.set_status(Status(StatusCode.ERROR, str(error)))
        span.end()

    def close(self) -> None:
        """End the spans still awaiting acknowledgement (as not acknowledged)."""
        pending, self._pending = self._pending, {}
        self._pending_headers = {}
        for span in pending.values():
            _end_unacknowledged(span)
        self._ctx_cache = None

    @property
    def pending_spans(self) -> int:
        """How many send spans await their acknowledgement."""
        return len(self._pending)


def _any_key(headers: Headers, fields: frozenset[str]) -> bool:
    """Whether any header key is one of ``fields``: one scan, no allocation.

    A record with none of the propagator's keys (the usual case) needs no creation-context
    parse and no removal before the trace headers are added.
    """
    if headers:
        for h in headers:
            if h[0] in fields:
                return True
    return False


def _end_unacknowledged(span: Span) -> None:
    span.set_attribute(ERROR_TYPE, _NO_ACK)
    span.set_status(Status(StatusCode.ERROR, "no acknowledgement was received for this record"))
    span.end()
