"""Span mode: what a record keeps alive until its acknowledgement, and what the hook then sees.

A send span ends when librdkafka reports its record, so every record in flight keeps the SDK
span alive; every further object kheaders keeps with it is one more the cyclic garbage
collector scans, again and again, while thousands are in flight (bench group
``produce-spans``). The broker here is unreachable: records stay in flight until purged.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanKind, StatusCode

from kheaders import Header, Headers, Producer, ProducerRecord, RecordMetadata
from kheaders.interceptors.tracing import TracingProducerInterceptor

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}
IN_FLIGHT = 400


def tracked_per_record(make_one: Callable[[int], object], n: int = IN_FLIGHT) -> float:
    """Objects the garbage collector tracks, per record, that ``n`` records in flight keep."""
    kept = []
    gc.collect()
    before = len(gc.get_objects())
    for i in range(n):
        kept.append(make_one(i))
    gc.collect()  # as the collector would: untracks what it can (tuples and dicts of atoms)
    per_record = (len(gc.get_objects()) - before) / n
    del kept
    return per_record


class Seen:
    """A second interceptor: the headers each record had after ``on_send``, and at its
    acknowledgement."""

    def __init__(self) -> None:
        self.sent: list[Headers] = []
        self.acked: list[tuple[Headers, list[tuple[str, bytes | None]]]] = []

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        self.sent.append(record.headers)
        return record

    def on_acknowledgement(self, md: RecordMetadata, error: object, headers: Headers) -> None:
        self.acked.append((headers, list(headers)))


def test_a_record_in_flight_keeps_the_sdk_span_and_two_objects_of_kheaders(
    provider: TracerProvider, finished: Callable[[], list[ReadableSpan]]
) -> None:
    """Beyond the SDK span itself: the record's Headers and its one delivery report (their
    pairs are plain tuples while in flight, which the collector stops tracking)."""
    tracer = provider.get_tracer("floor")
    sdk_span = tracked_per_record(lambda i: tracer.start_span("send t", kind=SpanKind.PRODUCER))
    finished()  # the floor's spans were never ended: nothing exported
    icpt = TracingProducerInterceptor("span", tracer_provider=provider)
    p = Producer(UNREACHABLE, interceptors=[icpt])
    try:
        per_record = tracked_per_record(
            lambda i: p.produce("t", b"v", headers=[("a", b"%d" % i), ("b", b"x")])
        )
        assert icpt.pending_spans == IN_FLIGHT
        # was sdk_span + 5 (the Headers, three Header pairs, the report)
        assert per_record < sdk_span + 2.5, (per_record, sdk_span)
        p.purge()
        p.poll(0)
        assert icpt.pending_spans == 0
        ended = finished()
        assert len(ended) == IN_FLIGHT
        assert all(s.status.status_code is StatusCode.ERROR for s in ended)  # purged
    finally:
        p.close(timeout=0)


def test_the_acknowledgement_sees_the_headers_on_send_left_as_headers(
    provider: TracerProvider, finished: Callable[[], list[ReadableSpan]]
) -> None:
    """Same object, read-only, equal to what was sent, read as Header pairs."""
    seen = Seen()
    icpt = TracingProducerInterceptor("span", tracer_provider=provider)
    p = Producer(UNREACHABLE, interceptors=[icpt, seen])
    try:
        p.produce("t", b"v", headers=[("a", b"1"), ("b", None)])
        p.purge()
        p.poll(0)
    finally:
        p.close(timeout=0)
    ((headers, items),) = seen.acked
    assert headers is seen.sent[0]
    assert headers.read_only
    assert [k for k, _ in items] == ["a", "b", "traceparent"]
    assert items[:2] == [("a", b"1"), ("b", None)]
    assert all(type(h) is Header for h in items)
    assert headers.last_header("a") == Header("a", b"1")
    assert headers[0] == Header("a", b"1")
    assert type(headers[0]) is Header
    assert len(finished()) == 1
