"""The interceptors inside kheaders.Producer / kheaders.Consumer, across a real broker."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import structlog
from confluent_kafka import Message, TopicPartition
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from structlog.testing import capture_logs

from kheaders import Consumer, Producer
from kheaders.interceptors.client_id import ClientIdInterceptor
from kheaders.interceptors.correlation import CorrelationIdInterceptor, correlation_scope
from kheaders.interceptors.logging import LoggingInterceptor
from kheaders.interceptors.tracing import TracingConsumerInterceptor, TracingProducerInterceptor

pytestmark = pytest.mark.integration


def consumer(bootstrap: str, topic: str, interceptors: list[object]) -> Consumer:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{topic}",
            "enable.auto.commit": False,
            "client.id": "relay",
        },
        interceptors=interceptors,
    )
    c.assign([TopicPartition(topic, 0, 0)])
    return c


def one(c: Consumer) -> Message:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        msg = c.poll(0.5)
        if msg is not None and msg.error() is None:
            return msg
    raise AssertionError("no record arrived")


def parent_of(span: ReadableSpan) -> int | None:
    return None if span.parent is None else span.parent.span_id


def test_two_hops_keep_one_trace_one_correlation_id_and_log_each_step(
    bootstrap: str,
    topic_factory: Callable[..., str],
    provider: TracerProvider,
    tracer: trace.Tracer,
    finished: Callable[[], list[ReadableSpan]],
) -> None:
    first, second = topic_factory(), topic_factory()
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        origin = Producer(
            {"bootstrap.servers": bootstrap},
            interceptors=[
                TracingProducerInterceptor("span", tracer_provider=provider),
                ClientIdInterceptor("origin"),
                CorrelationIdInterceptor(),
                LoggingInterceptor(),
            ],
        )
        # objects given as interceptors= are not configured by kheaders: configure them here
        relay_config = {"bootstrap.servers": bootstrap, "client.id": "relay"}
        relay_chain: list[Any] = [
            TracingProducerInterceptor("span", overwrite=True, tracer_provider=provider),
            ClientIdInterceptor(),
            CorrelationIdInterceptor(),
            LoggingInterceptor(),
        ]
        for icpt in relay_chain:
            icpt.configure(relay_config)
        relay = Producer(relay_config, interceptors=relay_chain)
        poller = TracingConsumerInterceptor(tracer_provider=provider)
        c1 = consumer(bootstrap, first, [poller, CorrelationIdInterceptor(), LoggingInterceptor()])
        c2 = consumer(bootstrap, second, [poller, LoggingInterceptor()])
        try:
            with tracer.start_as_current_span("request") as root:
                origin.produce(first, b"v1", b"k1")
            assert origin.flush(15) == 0
            msg = one(c1)
            with poller.process_span(msg), correlation_scope(msg):
                relay.produce(second, b"v2", b"k2", headers=msg.headers().copy())
            assert relay.flush(15) == 0
            out = one(c2)
            with poller.process_span(out):
                pass
        finally:
            c1.close()
            c2.close()
            origin.close()
            relay.close()

    spans = {s.name: s for s in finished()}
    send1, proc1 = spans[f"send {first}"], spans[f"process {first}"]
    send2, proc2 = spans[f"send {second}"], spans[f"process {second}"]
    assert {s.context.trace_id for s in (send1, proc1, send2, proc2)} == {
        root.get_span_context().trace_id
    }
    assert parent_of(send1) == root.get_span_context().span_id
    assert parent_of(proc1) == send1.context.span_id
    assert parent_of(send2) == proc1.context.span_id
    assert parent_of(proc2) == send2.context.span_id
    assert dict(send2.attributes or {})["messaging.client.id"] == "relay"
    assert [lk.context.span_id for lk in spans[f"poll {first}"].links] == [send1.context.span_id]

    headers = out.headers()
    assert len(headers.values("traceparent")) == 1
    assert headers.values("client.id") == [b"relay"]
    assert headers.values("correlation.id") == msg.headers().values("correlation.id")

    events = [(e["event"], e.get("topic")) for e in logs]
    assert events.count(("kafka.send", first)) == 1
    assert events.count(("kafka.ack", first)) == 1
    assert events.count(("kafka.consume", first)) == 1
    assert events.count(("kafka.ack", second)) == 1
    relay_send = next(e for e in logs if e["event"] == "kafka.send" and e["topic"] == second)
    assert relay_send["client_id"] == "relay"
    assert relay_send["correlation_id"] == msg.headers().last_value("correlation.id").decode()
    assert relay_send["trace_id"] == f"{root.get_span_context().trace_id:032x}"


def test_interceptors_named_in_config(
    bootstrap: str,
    topic_factory: Callable[..., str],
    tracer: trace.Tracer,
) -> None:
    topic = topic_factory()
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "named-svc",
            "interceptor.classes": "kheaders.interceptors.tracing.TracingProducerInterceptor,"
            "kheaders.interceptors.client_id.ClientIdInterceptor,"
            "kheaders.interceptors.correlation.CorrelationIdInterceptor",
        }
    )
    with tracer.start_as_current_span("request") as root:
        producer.produce(topic, b"v", b"k")
    assert producer.flush(15) == 0
    producer.close()
    c = consumer(bootstrap, topic, [])
    try:
        msg = one(c)
    finally:
        c.close()
    headers = msg.headers()
    sc = root.get_span_context()
    assert headers.values("traceparent") == [
        f"00-{sc.trace_id:032x}-{sc.span_id:016x}-{sc.trace_flags:02x}".encode()
    ]
    assert headers.values("client.id") == [b"named-svc"]
    assert len(headers.values("correlation.id")) == 1


def test_settings_named_in_config_reach_the_interceptors_not_librdkafka(
    bootstrap: str,
    topic_factory: Callable[..., str],
    tracer: trace.Tracer,
) -> None:
    topic = topic_factory()
    with capture_logs() as logs:
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": "named-span",
                "interceptor.classes": "kheaders.interceptors.tracing.TracingProducerInterceptor,"
                "kheaders.interceptors.logging.LoggingInterceptor",
                "kheaders.tracing.mode": "span",
                "kheaders.logging.level": "debug",
                "kheaders.logging.redact.extra": "x-user",
            }
        )
        # the global provider is the API's no-op: span mode then propagates the current span
        with tracer.start_as_current_span("request") as root:
            producer.produce(topic, b"v", b"k", headers=[("x-user", b"bob")])
        assert producer.flush(15) == 0
        producer.close()
        c = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"g-{topic}",
                "enable.auto.commit": False,
                "interceptor.classes": "kheaders.interceptors.logging.LoggingInterceptor",
                "kheaders.logging.consume": "batch",
            }
        )
        c.assign([TopicPartition(topic, 0, 0)])
        try:
            msg = one(c)
        finally:
            c.close()
    sc = root.get_span_context()
    assert msg.headers().values("traceparent") == [
        f"00-{sc.trace_id:032x}-{sc.span_id:016x}-{sc.trace_flags:02x}".encode()
    ]
    send = next(e for e in logs if e["event"] == "kafka.send")
    assert send["log_level"] == "debug"
    assert ("x-user", "<redacted>") in send["headers"]
    assert next(e for e in logs if e["event"] == "kafka.ack")["offset"] == 0
    assert next(e for e in logs if e["event"] == "kafka.consume")["count"] == 1
