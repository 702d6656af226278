"""One trace across Python, a Java service on the OpenTelemetry Java SDK, and Python again.

kheaders' TracingProducerInterceptor (span mode) sends a record; the Java service (interop/jvm
Tracing.java: the OpenTelemetry Java SDK 1.65 with the kafka-clients library
instrumentation 2.31, ``KafkaTelemetry.wrap``) reads it, handles it in a CONSUMER span whose
parent is the record's context, produces on within it; kheaders' consumer interceptor and
``process_span`` read that. docs/interceptors.md ("Trace context with OpenTelemetry Java")
points at these tests.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import pytest
from confluent_kafka import Message, TopicPartition
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from kheaders import Consumer, Producer
from kheaders.broker import create_topic
from kheaders.interceptors.tracing import TracingConsumerInterceptor, TracingProducerInterceptor
from tests.interop.jvm import Event, Jvm

pytestmark = pytest.mark.integration


def hexid(value: int, width: int) -> str:
    return format(value, f"0{width}x")


@dataclass(frozen=True)
class Trip:
    into: str
    out: str
    python: dict[str, ReadableSpan]  # by name
    java: dict[str, Event]  # by name


@pytest.fixture(scope="module")
def trip(jvm: Jvm, bootstrap: str) -> Trip:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    stem = f"trace-java-{uuid.uuid4().hex[:8]}"
    into, out = create_topic(bootstrap, f"{stem}-in"), create_topic(bootstrap, f"{stem}-out")
    sending = TracingProducerInterceptor("span", tracer_provider=provider)
    sending.configure({"bootstrap.servers": bootstrap, "client.id": "python-origin"})
    producer = Producer({"bootstrap.servers": bootstrap}, interceptors=[sending])
    with provider.get_tracer("checkout").start_as_current_span("checkout"):
        producer.produce(into, b"order", b"order-1")
    assert producer.flush(30) == 0

    spans = [e for e in jvm.run("tracing", bootstrap, into, out, "1") if e["event"] == "span"]

    group = f"{stem}-python"
    receiving = TracingConsumerInterceptor(tracer_provider=provider)
    receiving.configure({"bootstrap.servers": bootstrap, "group.id": group})
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group}, interceptors=[receiving]
    )
    consumer.assign([TopicPartition(out, 0, 0)])
    msg: Message | None = None
    deadline = time.monotonic() + 60
    while msg is None and time.monotonic() < deadline:
        got = consumer.poll(0.5)
        msg = got if got is not None and got.error() is None else None
    assert msg is not None
    with receiving.process_span(msg):
        pass
    consumer.close()
    python = {s.name: s for s in exporter.get_finished_spans()}
    return Trip(into, out, python, {str(e["name"]): e for e in spans})


def test_one_trace_runs_through_java_with_each_span_the_child_of_the_last_hop(trip: Trip) -> None:
    send = trip.python[f"send {trip.into}"]
    java_handle = trip.java[f"process {trip.into}"]  # the Java service's own span
    java_process = trip.java[f"{trip.into} process"]  # the instrumentation's
    java_publish = trip.java[f"{trip.out} publish"]
    process = trip.python[f"process {trip.out}"]
    trace_id = hexid(send.context.trace_id, 32)
    assert {e["trace_id"] for e in (java_handle, java_process, java_publish)} == {trace_id}
    assert hexid(process.context.trace_id, 32) == trace_id
    send_id = hexid(send.context.span_id, 16)
    assert java_handle["parent_span_id"] == send_id  # extracted from kheaders' traceparent
    assert java_process["parent_span_id"] == send_id
    assert java_publish["parent_span_id"] == java_handle["span_id"]
    assert process.parent is not None
    assert hexid(process.parent.span_id, 16) == java_publish["span_id"]  # Java's traceparent
    # the poll span starts a trace of its own and links each record's creation context
    poll = trip.python[f"poll {trip.out}"]
    assert [hexid(link.context.span_id, 16) for link in poll.links] == [java_publish["span_id"]]


def test_send_is_a_producer_span_and_process_a_consumer_span_on_both_sides(trip: Trip) -> None:
    assert trip.python[f"send {trip.into}"].kind is SpanKind.PRODUCER
    assert trip.java[f"{trip.out} publish"]["kind"] == "PRODUCER"
    assert trip.python[f"process {trip.out}"].kind is SpanKind.CONSUMER
    assert trip.java[f"{trip.into} process"]["kind"] == "CONSUMER"
    assert trip.python[f"poll {trip.out}"].kind is SpanKind.CLIENT


def test_each_side_names_spans_and_attributes_by_the_conventions_it_ships(trip: Trip) -> None:
    """kheaders: the messaging conventions 1.44 (``send T``, ``messaging.operation.name``);
    the Java instrumentation 2.31: the pre-1.26 ones (``T publish``, ``messaging.operation``)."""
    send = dict(trip.python[f"send {trip.into}"].attributes or {})
    publish = trip.java[f"{trip.out} publish"]["attributes"]
    shared = ("messaging.system", "messaging.destination.partition.id")
    assert {k: send[k] for k in shared} == {k: publish[k] for k in shared}
    assert (send["messaging.operation.name"], send["messaging.operation.type"]) == ("send", "send")
    assert publish["messaging.operation"] == "publish"
    assert "messaging.operation.name" not in publish
    renamed = {  # kheaders' name: the Java instrumentation's
        "messaging.client.id": "messaging.client_id",
        "messaging.kafka.offset": "messaging.kafka.message.offset",
    }
    for ours, theirs in renamed.items():
        assert ours in send
        assert ours not in publish
        assert theirs in publish
    process = dict(trip.python[f"process {trip.out}"].attributes or {})
    java_process = trip.java[f"{trip.into} process"]["attributes"]
    assert str(process["messaging.consumer.group.name"]).endswith("-python")
    assert java_process["messaging.kafka.consumer.group"] == "interop-tracing"
    assert java_process["messaging.operation"] == process["messaging.operation.name"] == "process"
