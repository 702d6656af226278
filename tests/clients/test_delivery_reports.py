"""Delivery reports: what a callback sees, and what a record keeps alive until its report.

librdkafka holds one Python callable per record until it reports the record; confluent-kafka
shows no headers there, so kheaders' report carries them. These tests hold the two promises
that shape it: the callback sees the record's headers as sent (whatever the caller passed and
did afterwards), and a record in flight keeps as few objects alive as that allows (each one
is scanned by every full garbage collection while tens of thousands are in flight).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError

from kheaders import (
    HeaderLimitError,
    HeaderLimits,
    Headers,
    Producer,
    ProducerRecord,
    RecordMetadata,
)

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}
"""Nothing listens there: records stay queued until purged or timed out."""

IN_FLIGHT = 2000


@pytest.fixture
def unreachable() -> Iterator[Callable[..., Producer]]:
    made: list[Producer] = []

    def make(**extra: Any) -> Producer:
        p = Producer({**UNREACHABLE, **extra})
        made.append(p)
        return p

    yield make
    for p in made:
        p.purge()
        p.poll(0)
        p.close(timeout=0)


def tracked_per_record(produce_one: Callable[[int], None], n: int = IN_FLIGHT) -> float:
    """Objects the garbage collector tracks, per record, that ``n`` records in flight keep."""
    gc.collect()
    before = len(gc.get_objects())
    for i in range(n):
        produce_one(i)
    gc.collect()  # as the collector would: untracks what it can (tuples of atoms)
    return (len(gc.get_objects()) - before) / n


@pytest.mark.integration
@pytest.mark.parametrize(
    ("passed", "expected"),
    [
        ([("a", b"1"), ("a", None), ("b", b"")], [("a", b"1"), ("a", None), ("b", b"")]),
        ({"a": "x", "b": b"y"}, [("a", b"x"), ("b", b"y")]),
        ([("a", bytearray(b"1"))], [("a", b"1")]),
        (None, []),
        ([], []),
    ],
    ids=["list", "dict", "bytearray-value", "none", "empty-list"],
)
def test_the_callback_sees_the_headers_as_sent_whatever_shape_was_passed(
    bootstrap: str, topic: str, passed: Any, expected: list[tuple[str, bytes | None]]
) -> None:
    seen: list[tuple[Any, Any]] = []
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"v", headers=passed, on_delivery=lambda e, m: seen.append((e, m.headers())))
    assert p.flush(10) == 0
    ((err, headers),) = seen
    assert err is None
    assert type(headers) is Headers
    assert headers.read_only
    assert headers == expected
    p.close(timeout=5)


@pytest.mark.integration
def test_a_headers_object_passed_is_the_one_the_callback_sees(bootstrap: str, topic: str) -> None:
    seen: list[Any] = []
    h = Headers([("a", b"1")])
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"v", headers=h, on_delivery=lambda e, m: seen.append(m.headers()))
    assert p.flush(10) == 0
    assert seen[0] is h
    assert h.read_only
    p.close(timeout=5)


@pytest.mark.integration
def test_changing_the_list_after_produce_does_not_change_the_reported_headers(
    bootstrap: str, topic: str
) -> None:
    seen: list[Any] = []
    h: list[Any] = [("a", b"1")]
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"v", headers=h, on_delivery=lambda e, m: seen.append(m.headers()))
    h.append(("b", b"2"))  # the caller reuses its list before the report comes
    h[0] = ("a", b"changed")
    p.produce(topic, b"w", headers=h, on_delivery=lambda e, m: seen.append(m.headers()))
    assert p.flush(10) == 0
    assert seen == [[("a", b"1")], [("a", b"changed"), ("b", b"2")]]
    p.close(timeout=5)


def test_a_failed_record_is_reported_with_its_error_and_headers(
    unreachable: Callable[..., Producer],
) -> None:
    seen: list[tuple[Any, Any]] = []

    def cb(err: Any, msg: Any) -> None:
        seen.append((err, msg.headers()))

    p = unreachable(**{"message.timeout.ms": 100})
    p.produce("t", b"v", headers=[("a", b"1")], on_delivery=cb)
    p.produce("t", b"v", on_delivery=cb)
    assert p.flush(10) == 0
    assert [err.code() for err, _ in seen] == [KafkaError._MSG_TIMED_OUT] * 2
    assert [h for _, h in seen] == [[("a", b"1")], []]
    assert all(h.read_only for _, h in seen)


def test_the_same_callback_costs_one_object_per_record_with_headers_none_without(
    unreachable: Callable[..., Producer],
) -> None:
    p = unreachable()
    lists = [[("traceparent", b"%055d" % i), ("client.id", b"svc")] for i in range(64)]
    reported: list[Any] = []

    def cb(err: Any, msg: Any) -> None:
        reported.append(msg.headers())

    with_headers = tracked_per_record(
        lambda i: p.produce("t", b"v", headers=lists[i % 64], on_delivery=cb)
    )
    without = tracked_per_record(lambda i: p.produce("t", b"v", on_delivery=cb))
    assert with_headers <= 1.01  # the report itself (its headers snapshot is not tracked)
    assert without <= 0.01  # one report serves every record of the callback
    p.purge()
    p.poll(0)
    assert len(reported) == 2 * IN_FLIGHT
    assert reported[0] == lists[0]
    assert reported[-1] == []


@pytest.mark.parametrize("shape", ["Headers", "dict"])
def test_headers_built_from_any_shape_keep_two_objects_per_record(
    unreachable: Callable[..., Producer], shape: str
) -> None:
    p = unreachable()
    reported: list[Any] = []

    def cb(err: Any, msg: Any) -> None:  # one callback for every record
        reported.append(msg)

    def make(i: int) -> Any:
        pairs = [("a", b"%d" % i), ("b", b"x")]
        return Headers(pairs) if shape == "Headers" else dict(pairs)

    per_record = tracked_per_record(lambda i: p.produce("t", b"v", headers=make(i), on_delivery=cb))
    assert per_record <= 2.01  # the closed Headers (pairs untracked) + the report
    p.purge()
    p.poll(0)
    assert [m.headers() for m in reported[:2]] == [
        [("a", b"0"), ("b", b"x")],
        [("a", b"1"), ("b", b"x")],
    ]
    assert all(m.headers().read_only for m in reported)


def test_a_callback_per_record_is_served_too(unreachable: Callable[..., Producer]) -> None:
    p = unreachable()
    seen: list[tuple[int, Any]] = []
    for i in range(20):  # more distinct callbacks than the producer keeps report functions for
        p.produce(
            "t",
            b"v",
            headers=[("i", b"%d" % i)] if i % 2 else None,
            on_delivery=lambda e, m, i=i: seen.append((i, m.headers())),
        )
    p.purge()
    p.poll(0)
    assert sorted(seen) == [(i, [("i", b"%d" % i)] if i % 2 else []) for i in range(20)]


def test_a_bound_method_callback_is_one_callback(unreachable: Callable[..., Producer]) -> None:
    """``obj.method`` makes a new bound method per access; they are equal, so one report
    function serves them all."""

    class Service:
        def __init__(self) -> None:
            self.seen: list[Any] = []

        def on_delivery(self, err: Any, msg: Any) -> None:
            self.seen.append(msg.headers())

    s = Service()
    p = unreachable()
    per_record = tracked_per_record(lambda i: p.produce("t", b"v", on_delivery=s.on_delivery))
    assert per_record <= 0.01
    p.purge()
    p.poll(0)
    assert len(s.seen) == IN_FLIGHT


class Acker:
    """Counts acknowledgements (keeps nothing per record)."""

    def __init__(self) -> None:
        self.acks = 0
        self.headers_seen = 0

    def on_acknowledgement(self, metadata: RecordMetadata, error: Any, headers: Headers) -> None:
        self.acks += 1
        self.headers_seen += len(headers)


def test_an_acknowledging_interceptor_costs_what_a_callback_costs_per_record() -> None:
    """An interceptor with only ``on_acknowledgement`` keeps a record on the callback's path:
    one report object over an untracked snapshot of the headers, none without headers (was
    2: the record's Headers and an ``Acknowledged``; 5 before that)."""
    acker = Acker()
    p = Producer(UNREACHABLE, interceptors=[acker])
    lists = [[("traceparent", b"%055d" % i), ("client.id", b"svc")] for i in range(64)]
    per_record = tracked_per_record(lambda i: p.produce("t", b"v", headers=lists[i % 64]))
    assert per_record <= 1.01  # the report (its headers snapshot is not tracked)
    without = tracked_per_record(lambda i: p.produce("t", b"v"))
    assert without <= 0.01
    seen: list[Any] = []

    def cb(err: Any, msg: Any) -> None:
        seen.append(msg.headers())

    with_cb = tracked_per_record(
        lambda i: p.produce("t", b"v", headers=lists[i % 64][:1], on_delivery=cb)
    )
    assert with_cb <= 1.01  # one report serves the interceptors and the callback
    p.purge()
    p.poll(0)
    assert acker.acks == 3 * IN_FLIGHT
    assert acker.headers_seen == 2 * IN_FLIGHT + IN_FLIGHT
    assert [list(h) for h in seen] == [lists[i % 64][:1] for i in range(IN_FLIGHT)]
    p.close(timeout=0)


def test_a_record_through_on_send_keeps_its_headers_and_one_report() -> None:
    """With an ``on_send`` hook too, the report keeps the record's Headers (an interceptor may
    match them by identity): the Headers and one report object, no more."""

    class Sender(Acker):
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            return record

    acker = Sender()
    p = Producer(UNREACHABLE, interceptors=[acker])
    per_record = tracked_per_record(
        lambda i: p.produce("t", b"v", headers=[("a", b"%d" % i), ("b", b"x")])
    )
    assert per_record <= 2.01  # the Headers (its pairs untracked) + the report
    p.purge()
    p.poll(0)
    assert (acker.acks, acker.headers_seen) == (IN_FLIGHT, 2 * IN_FLIGHT)
    p.close(timeout=0)


class Noting:
    """Notes each acknowledgement in a shared log, under its name."""

    def __init__(self, name: str, log: list[tuple[str, Any, Any, Any]]) -> None:
        self.name = name
        self.log = log

    def on_acknowledgement(self, metadata: RecordMetadata, error: Any, headers: Headers) -> None:
        self.log.append((self.name, metadata, error, headers))


def test_acknowledgements_run_once_in_chain_order_with_the_headers_sent_then_the_callback() -> None:
    log: list[tuple[str, Any, Any, Any]] = []
    p = Producer(UNREACHABLE, interceptors=[Noting("first", log), Noting("second", log)])
    passed = Headers([("h", b"x")])
    shapes: list[Any] = [[("a", b"1"), ("a", None)], {"d": "v"}, passed, None]
    for i, headers in enumerate(shapes):
        p.produce(
            "t",
            b"v%d" % i,
            headers=headers,
            on_delivery=lambda e, m: log.append(("cb", None, e, m.headers())),
        )
    shapes[0].append(("late", b"change"))  # after produce: not part of the record
    p.purge()
    p.poll(0)
    assert [name for name, *_ in log] == ["first", "second", "cb"] * 4
    expected = [[("a", b"1"), ("a", None)], [("d", b"v")], [("h", b"x")], []]
    for n, want in enumerate(expected):
        first, second, cb = log[3 * n : 3 * n + 3]
        assert list(first[3]) == list(second[3]) == list(cb[3]) == want
        assert first[3] is second[3] is cb[3]  # one read-only Headers per report
        assert first[3].read_only
        md = first[1]
        assert md is second[1]
        assert (md.topic, md.offset, md.serialized_value_size) == ("t", -1, 2)
        assert isinstance(md.latency, float)  # librdkafka's measure
        assert md.latency >= 0
        assert first[2].code() == KafkaError._PURGE_QUEUE
    assert log[6][3] is passed  # a Headers passed is the one acknowledged
    p.close(timeout=0)


def test_records_refused_on_the_acknowledging_path_are_acknowledged_once_with_the_error() -> None:
    log: list[tuple[str, Any, Any, Any]] = []
    p = Producer(
        {**UNREACHABLE, "queue.buffering.max.messages": 1},
        interceptors=[Noting("only", log)],
        limits=HeaderLimits(max_value_bytes=4),
    )
    p.produce("t", b"v", headers=[("a", b"1")])
    with pytest.raises(BufferError):  # the queue is full
        p.produce("t", b"v", headers=[("b", b"2")])
    with pytest.raises(HeaderLimitError):
        p.produce("t", b"v", headers=[("c", b"12345")])
    with pytest.raises(TypeError):  # a value librdkafka cannot send
        p.produce("t", 12345, headers={"d": "4"})
    refused = [(type(err).__name__, list(h), md) for _, md, err, h in log]
    assert [(name, h) for name, h, _ in refused] == [
        ("BufferError", [("b", b"2")]),
        ("HeaderLimitError", [("c", b"12345")]),
        ("TypeError", [("d", b"4")]),
    ]
    for *_, md in refused:
        assert (md.topic, md.partition, md.offset) == ("t", -1, -1)
        assert isinstance(md.latency, float)  # the producer's own measure
        assert md.latency >= 0
    p.purge()
    p.poll(0)
    assert len(log) == 4  # the queued record: its report, once
    assert list(log[3][3]) == [("a", b"1")]
    p.close(timeout=0)


def test_a_list_the_memo_lets_through_but_librdkafka_refuses_is_acknowledged_as_checked() -> None:
    log: list[tuple[str, Any, Any, Any]] = []
    p = Producer(UNREACHABLE, interceptors=[Noting("only", log)])
    p.produce("t", b"v", headers=[("a", b"1")])
    p.produce("t", b"v", headers=[("a", bytearray(b"1"))])
    p.purge()
    p.poll(0)
    assert [list(h) for *_, h in log] == [[("a", b"1")], [("a", b"1")]]
    assert [type(h.last_value("a")) for *_, h in log] == [bytes, bytes]
    p.close(timeout=0)


def test_send_reports_metadata_java_style_for_a_failed_record(
    unreachable: Callable[..., Producer],
) -> None:
    p = unreachable()
    seen: list[tuple[RecordMetadata, Any]] = []
    p.send(ProducerRecord("t", b"v", headers=[("a", b"1")]), lambda md, err: seen.append((md, err)))
    p.purge()
    p.poll(0)
    ((md, err),) = seen
    assert err.code() == KafkaError._PURGE_QUEUE
    assert (md.topic, md.offset, md.serialized_value_size) == ("t", -1, 1)


def test_a_list_equal_to_the_last_one_checked_is_reported_as_checked(
    unreachable: Callable[..., Producer],
) -> None:
    """A ``bytearray`` value equals the ``bytes`` of the list checked before, so the memo lets
    the list through; librdkafka refuses it and the record is checked again (``_memo_refused``):
    its report is rebuilt too, showing the checked pairs (``bytes``)."""
    p = unreachable()
    seen: list[Any] = []

    def cb(err: Any, msg: Any) -> None:
        seen.append(msg.headers())

    p.produce("t", b"v", headers=[("a", b"1")], on_delivery=cb)
    p.produce("t", b"v", headers=[("a", bytearray(b"1"))], on_delivery=cb)
    p.purge()
    p.poll(0)
    assert seen == [[("a", b"1")], [("a", b"1")]]
    assert all(type(h) is Headers and h.read_only for h in seen)
    assert [type(h.last_value("a")) for h in seen] == [bytes, bytes]  # as the model keeps them


def test_a_list_produced_again_unchanged_then_changed_keeps_what_each_record_sent(
    unreachable: Callable[..., Producer],
) -> None:
    """The second record passes on the memo (the very same pairs) and keeps the memo as its
    snapshot: changing the list afterwards, in place, reaches neither report."""
    p = unreachable()
    seen: list[Any] = []
    h: list[Any] = [("a", b"1"), ("b", b"2")]
    p.produce("t", b"v", headers=h, on_delivery=lambda e, m: seen.append(m.headers()))
    p.produce("t", b"w", headers=h, on_delivery=lambda e, m: seen.append(m.headers()))
    h[0] = ("a", b"changed")
    h.append(("c", b"3"))
    p.produce("t", b"x", headers=h, on_delivery=lambda e, m: seen.append(m.headers()))
    p.purge()
    p.poll(0)
    first = [("a", b"1"), ("b", b"2")]
    assert seen == [first, first, [("a", b"changed"), ("b", b"2"), ("c", b"3")]]
