"""Tracing across a real broker: two hops, and interop with opentelemetry-instrumentation-
confluent-kafka in both directions (its producer's records continue our trace and ours its).

kheaders.Producer/Consumer run the hooks themselves; here the hooks are called around raw
confluent-kafka clients exactly as the chain does (on_send, produce, on_acknowledgement from
the delivery report; on_consume on polled messages), so the wire part is real.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer, TopicPartition
from opentelemetry import propagate, trace
from opentelemetry.instrumentation.confluent_kafka import ConfluentKafkaInstrumentor
from opentelemetry.instrumentation.confluent_kafka.utils import KafkaContextGetter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanKind

from kheaders import Headers, ProducerRecord, RecordMetadata
from kheaders.interceptors.tracing import (
    TracingConsumerInterceptor,
    TracingProducerInterceptor,
    process_span,
)

pytestmark = pytest.mark.integration


def send(producer: Producer, icpt: TracingProducerInterceptor, rec: ProducerRecord) -> None:
    """What kheaders.Producer does with one record: on_send, produce, ack from the report."""
    rec = icpt.on_send(rec)
    headers = rec.headers.close()
    ack = getattr(icpt, "on_acknowledgement", None)  # absent in propagate mode

    def report(err: KafkaError | None, msg: Message) -> None:
        meta = RecordMetadata(rec.topic, msg.partition() or 0, msg.offset() or 0)
        if ack is not None:
            ack(meta, err, headers)

    producer.produce(rec.topic, rec.value, rec.key, headers=headers.to_list(), on_delivery=report)
    assert producer.flush(15) == 0


def consume_one(consumer: Any, topic: str) -> Message:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            return msg
    raise AssertionError(f"no record arrived on {topic}")


def raw_consumer(bootstrap: str, topic: str) -> Consumer:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "interop", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    return consumer


def parent_of(span: ReadableSpan) -> int | None:
    return None if span.parent is None else span.parent.span_id


def as_kheaders(msg: Message) -> Message:
    """What kheaders.Consumer hands over: read-only Headers, never None."""
    msg.set_headers(Headers(msg.headers() or []).close())
    return msg


def test_two_hops_through_the_broker_form_one_trace(
    bootstrap: str,
    topic_factory: Callable[..., str],
    provider: TracerProvider,
    tracer: trace.Tracer,
    finished: Callable[[], list[ReadableSpan]],
) -> None:
    first, second = topic_factory(), topic_factory()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    icpt = TracingProducerInterceptor("span", tracer_provider=provider)
    icpt.configure({"bootstrap.servers": bootstrap, "client.id": "svc"})
    poller = TracingConsumerInterceptor(tracer_provider=provider)

    with tracer.start_as_current_span("request") as root:
        send(producer, icpt, ProducerRecord(first, b"v1", b"k1"))
    c1 = raw_consumer(bootstrap, first)
    c2 = raw_consumer(bootstrap, second)
    try:
        msg = as_kheaders(consume_one(c1, first))
        poller.on_consume([msg])
        with process_span(msg, tracer):
            # the relay forwards the record's headers; overwrite gives the new hop its context
            relay = TracingProducerInterceptor("span", overwrite=True, tracer_provider=provider)
            send(producer, relay, ProducerRecord(second, b"v2", b"k2", msg.headers().copy()))
        out = as_kheaders(consume_one(c2, second))
        with process_span(out, tracer):
            pass
    finally:
        c1.close()
        c2.close()

    by_name = {s.name: s for s in finished()}
    send1, proc1 = by_name[f"send {first}"], by_name[f"process {first}"]
    send2, proc2 = by_name[f"send {second}"], by_name[f"process {second}"]
    poll1 = by_name[f"poll {first}"]
    trace_id = root.get_span_context().trace_id
    assert {s.context.trace_id for s in (send1, proc1, send2, proc2)} == {trace_id}
    assert parent_of(send1) == root.get_span_context().span_id
    assert parent_of(proc1) == send1.context.span_id
    assert parent_of(send2) == proc1.context.span_id
    assert parent_of(proc2) == send2.context.span_id
    assert [lk.context.span_id for lk in poll1.links] == [send1.context.span_id]
    assert dict(send1.attributes or {})["messaging.kafka.offset"] == 0
    assert out.headers().values("traceparent") == [
        f"00-{trace_id:032x}-{send2.context.span_id:016x}-{send2.context.trace_flags:02x}".encode()
    ]


def test_records_from_the_otel_instrumented_producer_continue_in_our_consumer(
    bootstrap: str,
    topic_factory: Callable[..., str],
    provider: TracerProvider,
    tracer: trace.Tracer,
    finished: Callable[[], list[ReadableSpan]],
) -> None:
    topic = topic_factory()
    theirs = ConfluentKafkaInstrumentor.instrument_producer(
        Producer({"bootstrap.servers": bootstrap}), tracer_provider=provider
    )
    headers: list[tuple[str, bytes]] = [("app", b"x")]
    theirs.produce(topic=topic, value=b"v", key=b"k", headers=headers)
    assert theirs.flush(15) == 0
    consumer = raw_consumer(bootstrap, topic)
    try:
        msg = as_kheaders(consume_one(consumer, topic))
    finally:
        consumer.close()
    TracingConsumerInterceptor(tracer_provider=provider).on_consume([msg])
    with process_span(msg, tracer):
        pass
    their_send = next(s for s in finished() if s.kind is SpanKind.PRODUCER)
    ours = next(s for s in finished() if s.name == f"process {topic}")
    poll = next(s for s in finished() if s.name == f"poll {topic}")
    assert ours.parent is not None
    assert (ours.parent.trace_id, ours.parent.span_id) == (
        their_send.context.trace_id,
        their_send.context.span_id,
    )
    assert [lk.context.span_id for lk in poll.links] == [their_send.context.span_id]


@pytest.mark.parametrize("mode", ["propagate", "span"])
def test_records_from_our_producer_continue_in_the_otel_instrumented_consumer(
    bootstrap: str,
    topic_factory: Callable[..., str],
    provider: TracerProvider,
    tracer: trace.Tracer,
    finished: Callable[[], list[ReadableSpan]],
    mode: str,
) -> None:
    topic = topic_factory()
    icpt = TracingProducerInterceptor(mode, tracer_provider=provider)
    producer = Producer({"bootstrap.servers": bootstrap})
    with tracer.start_as_current_span("request") as root:
        # a stale duplicate must not survive: their getter would take the first one
        send(
            producer,
            icpt,
            ProducerRecord(topic, b"v", b"k", Headers([("traceparent", b"junk")] * 2)),
        )
    raw = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "interop", "enable.auto.commit": False}
    )
    raw.assign([TopicPartition(topic, 0, 0)])
    theirs = ConfluentKafkaInstrumentor.instrument_consumer(raw, tracer_provider=provider)
    try:
        msg = consume_one(theirs, topic)
    finally:
        theirs.close()
    expected = (
        root.get_span_context()
        if mode == "propagate"
        else next(s for s in finished() if s.name == f"send {topic}").context
    )
    remote = trace.get_current_span(
        propagate.extract(msg.headers(), getter=KafkaContextGetter())
    ).get_span_context()
    assert (remote.trace_id, remote.span_id) == (expected.trace_id, expected.span_id)
    their_process = next(s for s in finished() if s.name == f"{topic} process")
    assert [(lk.context.trace_id, lk.context.span_id) for lk in their_process.links] == [
        (expected.trace_id, expected.span_id)
    ]
