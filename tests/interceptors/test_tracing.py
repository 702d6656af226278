"""Tracing interceptors: header injection rules, span mode, strict extraction, poll spans."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError, Message
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry import baggage, context, propagate, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.propagators.textmap import (
    CarrierT,
    Getter,
    Setter,
    TextMapPropagator,
    default_getter,
    default_setter,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanContext, SpanKind, StatusCode, TraceFlags, TraceState
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from kheaders import ConfigurationError, Headers, ProducerRecord, RecordMetadata
from kheaders.interceptors.tracing import (
    TracingConsumerInterceptor,
    TracingProducerInterceptor,
    extract,
    process_span,
)


class Finished:
    """The spans finished during one test."""

    def __init__(self, exporter: InMemorySpanExporter) -> None:
        self._exporter = exporter

    def all(self) -> list[ReadableSpan]:
        return list(self._exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.all() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.all()]
        return found[0]


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> Iterator[Finished]:
    exporter.clear()
    yield Finished(exporter)
    exporter.clear()


TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"
REMOTE = f"00-{TRACE}-{SPAN}-01"


def record(headers: Any = None, key: Any = "k1", topic: str = "orders") -> ProducerRecord:
    return ProducerRecord(topic, b"v", key, Headers(headers))


def message(headers: Any, topic: str = "orders", offset: int = 5, key: bytes = b"k1") -> Any:
    """A received record as kheaders.Consumer hands it over: read-only Headers."""
    msg = Message(topic=topic, partition=2, offset=offset, key=key, value=b"v", timestamp=(1, 1000))
    msg.set_headers(Headers(headers).close())
    return msg


def traceparent_of(span: trace.Span) -> str:
    sc = span.get_span_context()
    return f"00-{sc.trace_id:032x}-{sc.span_id:016x}-{sc.trace_flags:02x}"


def trace_values(headers: Headers) -> list[bytes | None]:
    return headers.values("traceparent")


# -- propagate mode --------------------------------------------------------------------------


def test_propagate_injects_the_current_span_and_starts_none(
    tracer: trace.Tracer, provider: TracerProvider, spans: Finished
) -> None:
    icpt = TracingProducerInterceptor(tracer_provider=provider)
    with tracer.start_as_current_span("work") as span:
        out = icpt.on_send(record())
    assert trace_values(out.headers) == [traceparent_of(span).encode()]
    assert [s.name for s in spans.all()] == ["work"]


def test_propagate_without_a_current_span_writes_no_trace_headers() -> None:
    out = TracingProducerInterceptor().on_send(record([("a", b"1")]))
    assert list(out.headers) == [("a", b"1")]


def test_duplicate_and_invalid_trace_headers_are_replaced_by_exactly_one(
    tracer: trace.Tracer,
) -> None:
    icpt = TracingProducerInterceptor()
    rec = record(
        [
            ("traceparent", REMOTE),
            ("tracestate", "a=1"),
            ("x", b"1"),
            ("traceparent", REMOTE),
            ("tracestate", "b=2"),
        ]
    )
    with tracer.start_as_current_span("work") as span:
        out = icpt.on_send(rec)
    assert trace_values(out.headers) == [traceparent_of(span).encode()]
    assert out.headers.values("tracestate") == []
    assert out.headers.values("x") == [b"1"]


def test_invalid_traceparent_without_current_span_is_removed() -> None:
    out = TracingProducerInterceptor().on_send(record([("traceparent", REMOTE.upper())]))
    assert trace_values(out.headers) == []


def test_valid_creation_context_is_kept_unless_overwrite(tracer: trace.Tracer) -> None:
    with tracer.start_as_current_span("work") as span:
        kept = TracingProducerInterceptor().on_send(record([("traceparent", REMOTE)]))
        replaced = TracingProducerInterceptor(overwrite=True).on_send(
            record([("traceparent", REMOTE), ("tracestate", "a=1")])
        )
    assert trace_values(kept.headers) == [REMOTE.encode()]
    assert trace_values(replaced.headers) == [traceparent_of(span).encode()]
    assert replaced.headers.values("tracestate") == []


@pytest.mark.parametrize("mode", ["propagate", "span"])
@pytest.mark.parametrize("overwrite", [False, True])
def test_no_duplicate_trace_headers_after_many_hops_and_resends(
    tracer: trace.Tracer, provider: TracerProvider, mode: str, overwrite: bool
) -> None:
    icpt = TracingProducerInterceptor(mode, overwrite=overwrite, tracer_provider=provider)
    rec = record()
    for hop in range(5):
        with tracer.start_as_current_span(f"hop{hop}"):
            rec = icpt.on_send(rec)  # a re-send of the same record
            relayed = ProducerRecord(rec.topic, rec.value, rec.key, rec.headers.copy().close())
            rec = icpt.on_send(relayed)  # a relay forwarding the received headers
            if mode == "span":
                icpt.on_acknowledgement(RecordMetadata("orders", 0, hop), None, rec.headers)
        assert len(trace_values(rec.headers)) == 1
        assert len(rec.headers.values("tracestate")) <= 1
    assert icpt.pending_spans <= 5
    icpt.close()


def test_read_only_headers_are_copied_before_writing(tracer: trace.Tracer) -> None:
    closed = Headers([("a", b"1")]).close()
    rec = ProducerRecord("orders", b"v", None, closed)
    with tracer.start_as_current_span("work"):
        out = TracingProducerInterceptor().on_send(rec)
    assert out.headers is not closed
    assert list(closed) == [("a", b"1")]
    assert len(trace_values(out.headers)) == 1


def test_cache_follows_context_changes(tracer: trace.Tracer) -> None:
    icpt = TracingProducerInterceptor()
    seen = []
    with tracer.start_as_current_span("a") as a:
        first = icpt.on_send(record()).headers.last_value("traceparent")
        again = icpt.on_send(record()).headers.last_value("traceparent")
        seen.append(traceparent_of(a))
        with tracer.start_as_current_span("b") as b:
            inner = icpt.on_send(record()).headers.last_value("traceparent")
            seen.append(traceparent_of(b))
        after = icpt.on_send(record()).headers.last_value("traceparent")
    outside = icpt.on_send(record()).headers.last_value("traceparent")
    assert first == again == after == seen[0].encode()
    assert inner == seen[1].encode()
    assert outside is None


def test_tracestate_and_baggage_are_injected_and_cache_sees_baggage_changes() -> None:
    sc = SpanContext(
        int(TRACE, 16), int(SPAN, 16), False, TraceFlags(1), TraceState([("vendor", "abc")])
    )
    icpt = TracingProducerInterceptor(
        propagator=CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])
    )
    ctx = trace.set_span_in_context(trace.NonRecordingSpan(sc))
    token = context.attach(baggage.set_baggage("user", "u1", ctx))
    try:
        one = icpt.on_send(record()).headers
    finally:
        context.detach(token)
    token = context.attach(baggage.set_baggage("user", "u2", ctx))
    try:
        two = icpt.on_send(record()).headers
    finally:
        context.detach(token)
    assert one.to_dict() == {
        "traceparent": REMOTE.encode(),
        "tracestate": b"vendor=abc",
        "baggage": b"user=u1",
    }
    assert two.last_value("baggage") == b"user=u2"


class PrefixPropagator(TextMapPropagator):
    """A non-W3C propagator: writes the span id under ``x-span``."""

    def extract(
        self,
        carrier: CarrierT,
        context: context.Context | None = None,
        getter: Getter[CarrierT] = default_getter,
    ) -> context.Context:
        return context or context_module_empty()

    def inject(
        self,
        carrier: CarrierT,
        context: context.Context | None = None,
        setter: Setter[CarrierT] = default_setter,
    ) -> None:
        sc = trace.get_current_span(context).get_span_context()
        if sc.is_valid:
            setter.set(carrier, "x-span", f"{sc.span_id:016x}")

    @property
    def fields(self) -> set[str]:
        return {"x-span"}


def context_module_empty() -> context.Context:
    return context.Context()


def test_span_mode_with_another_propagator_injects_its_fields(
    provider: TracerProvider, spans: Finished
) -> None:
    icpt = TracingProducerInterceptor(
        "span", tracer_provider=provider, propagator=PrefixPropagator()
    )
    rec = icpt.on_send(record([("x-span", b"old"), ("traceparent", REMOTE.upper())]))
    icpt.on_acknowledgement(RecordMetadata("orders", 0, 1), None, rec.headers)
    sent = spans.one("send orders")
    assert rec.headers.to_list() == [("x-span", f"{sent.context.span_id:016x}".encode())]


# -- span mode ------------------------------------------------------------------------------


def span_interceptor(provider: TracerProvider, **config: Any) -> TracingProducerInterceptor:
    icpt = TracingProducerInterceptor("span", tracer_provider=provider)
    icpt.configure({"client.id": "svc-a", "bootstrap.servers": "127.0.0.1:9092,other:1", **config})
    return icpt


def test_span_mode_records_a_producer_span_ended_on_acknowledgement(
    tracer: trace.Tracer, provider: TracerProvider, spans: Finished
) -> None:
    icpt = span_interceptor(provider)
    with tracer.start_as_current_span("request") as parent:
        rec = icpt.on_send(record(key="user-1"))
    assert spans.named("send orders") == []
    icpt.on_acknowledgement(RecordMetadata("orders", 3, 42), None, rec.headers)
    sent = spans.one("send orders")
    assert sent.kind is SpanKind.PRODUCER
    assert sent.parent is not None
    assert sent.parent.span_id == parent.get_span_context().span_id
    assert sent.context.trace_id == parent.get_span_context().trace_id
    assert dict(sent.attributes or {}) == {
        "messaging.system": "kafka",
        "messaging.operation.name": "send",
        "messaging.operation.type": "send",
        "messaging.destination.name": "orders",
        "messaging.kafka.message.key": "user-1",
        "messaging.client.id": "svc-a",
        "server.address": "127.0.0.1",
        "server.port": 9092,
        "messaging.destination.partition.id": "3",
        "messaging.kafka.offset": 42,
    }
    assert rec.headers.values("traceparent") == [
        f"00-{sent.context.trace_id:032x}-{sent.context.span_id:016x}-{sent.context.trace_flags:02x}".encode()
    ]
    assert sent.end_time is not None
    assert sent.start_time is not None
    assert sent.end_time >= sent.start_time
    assert sent.status.status_code is StatusCode.UNSET
    assert icpt.pending_spans == 0


def test_span_mode_headers_equal_what_the_global_propagator_writes(
    provider: TracerProvider, spans: Finished
) -> None:
    sc = SpanContext(
        int(TRACE, 16), int(SPAN, 16), True, TraceFlags(1), TraceState([("congo", "t61")])
    )
    ctx = baggage.set_baggage(
        "tenant", "t 1", trace.set_span_in_context(trace.NonRecordingSpan(sc))
    )
    icpt = span_interceptor(provider)
    token = context.attach(ctx)
    try:
        rec = icpt.on_send(record())
    finally:
        context.detach(token)
    icpt.on_acknowledgement(RecordMetadata("orders", 0, 0), None, rec.headers)
    sent = spans.one("send orders")
    expected: dict[str, str] = {}
    propagate.inject(
        expected,
        context=baggage.set_baggage(
            "tenant", "t 1", trace.set_span_in_context(trace.NonRecordingSpan(sent.context))
        ),
    )
    assert {k: v.decode() for k, v in rec.headers.to_dict().items()} == expected
    assert set(expected) == {"traceparent", "tracestate", "baggage"}


def test_span_mode_failure_sets_error_status_and_type(
    provider: TracerProvider, spans: Finished
) -> None:
    icpt = span_interceptor(provider)
    rec = icpt.on_send(record(key=b"\xff"))
    icpt.on_acknowledgement(
        RecordMetadata("orders"), KafkaError(KafkaError._MSG_TIMED_OUT), rec.headers
    )
    sent = spans.one("send orders")
    assert sent.status.status_code is StatusCode.ERROR
    attrs = dict(sent.attributes or {})
    assert attrs["error.type"] == "_MSG_TIMED_OUT"
    assert "messaging.kafka.message.key" not in attrs
    assert "messaging.kafka.offset" not in attrs
    assert "messaging.destination.partition.id" not in attrs


def test_span_mode_failure_with_a_python_exception(
    provider: TracerProvider, spans: Finished
) -> None:
    icpt = span_interceptor(provider)
    rec = icpt.on_send(record())
    icpt.on_acknowledgement(RecordMetadata("orders"), BufferError("queue full"), rec.headers)
    assert dict(spans.one("send orders").attributes or {})["error.type"] == "BufferError"


def test_span_mode_links_to_a_kept_creation_context(
    provider: TracerProvider, spans: Finished
) -> None:
    icpt = span_interceptor(provider)
    rec = icpt.on_send(record([("traceparent", REMOTE)]))
    icpt.on_acknowledgement(RecordMetadata("orders", 0, 1), None, rec.headers)
    sent = spans.one("send orders")
    assert rec.headers.values("traceparent") == [REMOTE.encode()]
    assert [f"{link.context.span_id:016x}" for link in sent.links] == [SPAN]


def test_unacknowledged_spans_are_bounded_and_ended(
    provider: TracerProvider, spans: Finished
) -> None:
    icpt = TracingProducerInterceptor("span", tracer_provider=provider, max_pending=2)
    records = [icpt.on_send(record(topic=f"t{i}")) for i in range(3)]
    assert icpt.pending_spans == 2
    lost = spans.one("send t0")
    assert lost.status.status_code is StatusCode.ERROR
    assert dict(lost.attributes or {})["error.type"] == "kheaders.no_acknowledgement"
    icpt.on_acknowledgement(RecordMetadata("t0", 0, 0), None, records[0].headers)  # late: ignored
    icpt.close()
    assert icpt.pending_spans == 0
    assert {s.name for s in spans.all()} == {"send t0", "send t1", "send t2"}


def test_acknowledgement_for_unknown_headers_is_ignored(provider: TracerProvider) -> None:
    icpt = span_interceptor(provider)
    icpt.on_acknowledgement(RecordMetadata("orders", 0, 0), None, Headers())
    assert icpt.pending_spans == 0


# -- configuration ---------------------------------------------------------------------------


def test_settings_come_from_config_keys_when_built_by_name() -> None:
    icpt = TracingProducerInterceptor()
    icpt.configure(
        {
            "kheaders.tracing.mode": "SPAN",
            "kheaders.tracing.overwrite": "true",
            "kheaders.tracing.max.pending.spans": "10",
        }
    )
    assert icpt.mode == "span"


def test_constructor_arguments_win_over_config() -> None:
    icpt = TracingProducerInterceptor("propagate")
    icpt.configure({"kheaders.tracing.mode": "span"})
    assert icpt.mode == "propagate"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("kheaders.tracing.mode", "spans"),
        ("kheaders.tracing.overwrite", "maybe"),
        ("kheaders.tracing.max.pending.spans", "0"),
        ("kheaders.tracing.max.pending.spans", "x"),
    ],
)
def test_bad_config_value_names_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigurationError, match=key.replace(".", r"\.")):
        TracingProducerInterceptor().configure({key: value})


def test_bad_mode_argument_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="mode"):
        TracingProducerInterceptor("trace")


# -- extraction and processing ----------------------------------------------------------------


def test_extract_gives_the_remote_parent_and_tracestate() -> None:
    ctx = extract(message([("traceparent", REMOTE), ("tracestate", "a=1,BAD=2")]))
    sc = trace.get_current_span(ctx).get_span_context()
    assert (sc.trace_id, sc.span_id, sc.is_remote) == (int(TRACE, 16), int(SPAN, 16), True)
    assert list(sc.trace_state.items()) == [("a", "1")]


@pytest.mark.parametrize(
    "headers",
    [
        [("traceparent", REMOTE), ("traceparent", REMOTE)],
        [("traceparent", REMOTE.upper()), ("tracestate", "a=1")],
        [("traceparent", None)],
        [("traceparent", b"\xff\xfe")],
        [],
    ],
)
def test_extract_gives_no_parent_for_invalid_or_duplicate_context(headers: Any) -> None:
    assert not trace.get_current_span(extract(message(headers))).get_span_context().is_valid


def test_extract_accepts_raw_confluent_messages_and_headers() -> None:
    raw = Message(topic="t", partition=0, offset=0, headers=[("traceparent", REMOTE.encode())])
    none = Message(topic="t", partition=0, offset=0)
    assert trace.get_current_span(extract(raw)).get_span_context().span_id == int(SPAN, 16)
    assert (
        trace.get_current_span(extract(Headers([("traceparent", REMOTE)])))
        .get_span_context()
        .is_valid
    )
    assert not trace.get_current_span(extract(none)).get_span_context().is_valid


def test_extract_reads_baggage() -> None:
    ctx = extract(message([("traceparent", REMOTE), ("baggage", "user=u1")]))
    assert baggage.get_baggage("user", ctx) == "u1"


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["traceparent", "tracestate", "baggage", "x"]),
            st.one_of(st.none(), st.binary(max_size=80), st.text(max_size=80).map(str.encode)),
        ),
        max_size=6,
    )
)
def test_extract_never_raises(pairs: list[tuple[str, bytes | None]]) -> None:
    extract(Headers(pairs))


def _seen(ctx: context.Context) -> tuple[object, ...]:
    sc = trace.get_current_span(ctx).get_span_context()
    state = list(sc.trace_state.items()) if sc.trace_state else []
    return (
        sc.is_valid,
        sc.trace_id,
        sc.span_id,
        sc.trace_flags,
        sc.is_remote,
        state,
        dict(baggage.get_all(ctx)),
    )


TRACE_VALUES = st.one_of(
    st.none(),
    st.binary(max_size=60),
    st.sampled_from([REMOTE, REMOTE.upper(), f"00-{TRACE}-{SPAN}-00", "a=1,b=2", "user=u1"]).map(
        str.encode
    ),
)


@given(
    st.lists(
        st.tuples(st.sampled_from(["traceparent", "tracestate", "baggage", "x"]), TRACE_VALUES),
        max_size=6,
    )
)
def test_extract_fast_path_gives_what_the_w3c_propagators_give(
    pairs: list[tuple[str, bytes | None]],
) -> None:
    """The W3C-only shortcut parses once; the propagators themselves agree on every input."""
    from kheaders.interceptors._tracing_common import STRICT_GETTER

    headers = Headers(pairs)
    for prop in (
        CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()]),
        TraceContextTextMapPropagator(),
    ):
        expected = prop.extract(headers, context=context.Context(), getter=STRICT_GETTER)
        assert _seen(extract(headers, propagator=prop)) == _seen(expected)


def test_process_span_is_a_child_of_the_creation_context(
    tracer: trace.Tracer, spans: Finished
) -> None:
    with process_span(message([("traceparent", REMOTE)]), tracer, consumer_group="g1") as span:
        assert trace.get_current_span() is span
    done = spans.one("process orders")
    assert done.kind is SpanKind.CONSUMER
    assert done.parent is not None
    assert (done.parent.trace_id, done.parent.span_id) == (int(TRACE, 16), int(SPAN, 16))
    assert dict(done.attributes or {}) == {
        "messaging.system": "kafka",
        "messaging.operation.name": "process",
        "messaging.operation.type": "process",
        "messaging.destination.name": "orders",
        "messaging.destination.partition.id": "2",
        "messaging.kafka.offset": 5,
        "messaging.kafka.message.key": "k1",
        "messaging.consumer.group.name": "g1",
    }


def test_process_span_link_only_starts_a_new_trace_linked_to_the_record(
    tracer: trace.Tracer, spans: Finished
) -> None:
    msg = message([("traceparent", REMOTE), ("baggage", "user=evil")])
    with tracer.start_as_current_span("loop"), process_span(msg, tracer, link_only=True):
        assert baggage.get_baggage("user") is None
    done = spans.one("process orders")
    assert done.parent is None
    assert done.context.trace_id != int(TRACE, 16)
    assert [(lk.context.trace_id, lk.context.span_id) for lk in done.links] == [
        (int(TRACE, 16), int(SPAN, 16))
    ]


def test_process_span_without_context_starts_a_root(tracer: trace.Tracer, spans: Finished) -> None:
    with tracer.start_as_current_span("loop"), process_span(message([]), tracer):
        pass
    assert spans.one("process orders").parent is None


def test_process_span_records_exceptions(tracer: trace.Tracer, spans: Finished) -> None:
    with pytest.raises(ValueError, match="boom"), process_span(message([]), tracer):
        raise ValueError("boom")
    assert spans.one("process orders").status.status_code is StatusCode.ERROR


def test_poll_span_links_each_record_with_its_attributes(
    provider: TracerProvider, spans: Finished
) -> None:
    other = f"00-{TRACE}-{'c' * 16}-00"
    batch = [
        message([("traceparent", REMOTE)], offset=5, key=b"a"),
        message([], offset=6),
        message([("traceparent", other)], offset=7, key=b"\xff"),
    ]
    icpt = TracingConsumerInterceptor(tracer_provider=provider)
    icpt.configure({"group.id": "g1", "client.id": "c1", "bootstrap.servers": "localhost:9092"})
    assert icpt.on_consume(batch) is batch
    poll = spans.one("poll orders")
    assert poll.kind is SpanKind.CLIENT
    attrs = dict(poll.attributes or {})
    assert attrs["messaging.batch.message_count"] == 3
    assert attrs["messaging.operation.type"] == "receive"
    assert attrs["messaging.operation.name"] == "poll"
    assert attrs["messaging.consumer.group.name"] == "g1"
    assert attrs["messaging.client.id"] == "c1"
    assert attrs["server.address"] == "localhost"
    links = [(f"{lk.context.span_id:016x}", dict(lk.attributes or {})) for lk in poll.links]
    assert links == [
        (
            SPAN,
            {
                "messaging.destination.partition.id": "2",
                "messaging.kafka.offset": 5,
                "messaging.kafka.message.key": "a",
            },
        ),
        ("c" * 16, {"messaging.destination.partition.id": "2", "messaging.kafka.offset": 7}),
    ]


def test_poll_span_per_topic_and_error_events_skipped(
    provider: TracerProvider, spans: Finished
) -> None:
    eof = Message(topic="a", partition=0, offset=9, error=KafkaError(KafkaError._PARTITION_EOF))
    batch = [message([], topic="a"), message([], topic="b", offset=1), eof]
    TracingConsumerInterceptor(tracer_provider=provider).on_consume(batch)
    a, b = spans.one("poll a"), spans.one("poll b")
    assert "messaging.batch.message_count" not in dict(a.attributes or {})
    assert dict(b.attributes or {})["messaging.kafka.offset"] == 1


def test_empty_batch_records_no_span(provider: TracerProvider, spans: Finished) -> None:
    assert TracingConsumerInterceptor(tracer_provider=provider).on_consume([]) == []
    assert spans.all() == []


def test_consumer_interceptor_process_span_uses_its_settings(
    provider: TracerProvider, spans: Finished
) -> None:
    icpt = TracingConsumerInterceptor(tracer_provider=provider)
    icpt.configure({"kheaders.tracing.link.only": "true", "group.id": "g"})
    with icpt.process_span(message([("traceparent", REMOTE)])):
        pass
    done = spans.one("process orders")
    assert done.parent is None
    assert len(done.links) == 1
    assert dict(done.attributes or {})["messaging.consumer.group.name"] == "g"


def test_link_only_topics_apply_per_topic(provider: TracerProvider, spans: Finished) -> None:
    icpt = TracingConsumerInterceptor(tracer_provider=provider)
    icpt.configure({"kheaders.tracing.link.only.topics": "public-in, other"})
    with icpt.process_span(message([("traceparent", REMOTE)], topic="public-in")):
        pass
    with icpt.process_span(message([("traceparent", REMOTE)], topic="internal")):
        pass
    untrusted, trusted = spans.one("process public-in"), spans.one("process internal")
    assert untrusted.parent is None
    assert len(untrusted.links) == 1
    assert trusted.parent is not None
    assert trusted.parent.span_id == int(SPAN, 16)


def test_acknowledgement_hook_exists_in_span_mode_only() -> None:
    """Propagate mode has no ack hook, so producers skip per-record delivery callbacks."""
    assert getattr(TracingProducerInterceptor(), "on_acknowledgement", None) is None
    assert callable(TracingProducerInterceptor("span").on_acknowledgement)
    by_name = TracingProducerInterceptor()
    by_name.configure({"kheaders.tracing.mode": "span"})
    assert callable(by_name.on_acknowledgement)


def test_span_mode_without_an_sdk_propagates_the_current_context(tracer: trace.Tracer) -> None:
    icpt = TracingProducerInterceptor("span", tracer_provider=trace.NoOpTracerProvider())
    with tracer.start_as_current_span("work") as span:
        out = icpt.on_send(record([("traceparent", REMOTE.upper())]))
    assert trace_values(out.headers) == [traceparent_of(span).encode()]
    icpt.close()
