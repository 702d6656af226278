"""kheaders.Producer: confluent's produce() with Headers, interceptors and serializers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from hypothesis import given, settings
from hypothesis import strategies as st

from kheaders import (
    Headers,
    Producer,
    ProducerRecord,
    ReadOnlyHeadersError,
    RecordMetadata,
    SerializationError,
    wrap_producer,
)
from kheaders._client.producer import sender_of
from tests.support.interceptors import Recorder, Utf8Serializer

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}
"""Nothing listens there: records stay queued, then time out (message.timeout.ms)."""


def counting(reports: list[Any], **extra: Any) -> dict[str, Any]:
    """UNREACHABLE config whose default delivery callback records every report."""
    return {**UNREACHABLE, **extra, "on_delivery": lambda err, msg: reports.append(msg)}


def queued(p: Producer, reports: list[Any]) -> int:
    """Purge ``p`` and return how many records it had queued (each gets a failure report)."""
    p.purge()
    p.poll(0)
    return len(reports)


HEADERS = [
    ("dup", b"1"),
    ("null", None),
    ("empty", b""),
    ("dup", b"2"),
    ("clé-ü-日本", b"wert"),
]


def read_raw(bootstrap: str, topic: str, count: int, partition: int = 0) -> list[Any]:
    """Read ``count`` records with a plain confluent consumer (the bytes as on the wire)."""
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "read-raw"})
    c.assign([TopicPartition(topic, partition, 0)])
    out: list[Any] = []
    try:
        for _ in range(200):
            if len(out) >= count:
                break
            for m in c.consume(count - len(out), 0.1):
                assert m.error() is None, m.error()
                out.append(m)
    finally:
        c.close()
    assert len(out) == count
    return out


@pytest.fixture(params=["plain", "with-interceptor"])
def make_producer(request: pytest.FixtureRequest, bootstrap: str) -> Callable[..., Producer]:
    """Both produce() implementations: the lean one and the full one."""
    made: list[Producer] = []

    def make(**extra: Any) -> Producer:
        interceptors = [Recorder()] if request.param == "with-interceptor" else []
        p = Producer({"bootstrap.servers": bootstrap, **extra}, interceptors=interceptors)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close(timeout=10)


@pytest.mark.integration
def test_round_trip_is_byte_for_byte_in_order(
    make_producer: Callable[..., Producer], bootstrap: str, topic: str
) -> None:
    p = make_producer()
    big = bytes(range(256)) * 400  # 100 KB value
    p.produce(topic, b"v0", b"k", headers=HEADERS)  # positional value, key
    p.produce(topic, None, b"k", headers=Headers(HEADERS))  # null value, same key
    p.produce(topic, b"", "ключ", headers=dict(HEADERS[:3]))  # empty value, non-ASCII key
    p.produce(topic, big, None, headers=[])  # empty headers, large value
    p.produce(topic, value=b"v4", key=b"k", headers=[("big", big)])  # large header
    assert p.flush(10) == 0
    msgs = read_raw(bootstrap, topic, 5)
    interceptor = bool(p.interceptors)
    extra = [("rec", b"1")] if interceptor else []
    assert [m.value() for m in msgs] == [b"v0", None, b"", big, b"v4"]
    assert [m.key() for m in msgs] == [b"k", b"k", "ключ".encode(), None, b"k"]
    assert msgs[0].headers() == HEADERS + extra
    assert msgs[1].headers() == HEADERS + extra
    assert msgs[2].headers() == [("dup", b"1"), ("null", None), ("empty", b""), *extra]
    assert msgs[3].headers() == (extra or None)
    assert msgs[4].headers() == [("big", big), *extra]


@pytest.mark.integration
def test_on_delivery_sees_the_records_read_only_headers(
    make_producer: Callable[..., Producer], topic: str
) -> None:
    p = make_producer()
    seen: list[tuple[Any, Any]] = []
    p.produce(topic, b"a", headers=[("h", b"1")], on_delivery=lambda e, m: seen.append((e, m)))
    p.produce(topic, b"b", callback=lambda e, m: seen.append((e, m)))
    assert p.flush(10) == 0
    (err_a, msg_a), (err_b, msg_b) = seen
    assert err_a is None
    assert err_b is None
    assert isinstance(msg_a.headers(), Headers)
    assert msg_a.headers().read_only
    assert msg_a.headers().last_value("h") == b"1"
    assert msg_b.headers() is not None
    assert msg_b.headers().read_only
    assert (msg_a.offset(), msg_b.offset()) == (0, 1)


def test_config_on_delivery_becomes_the_default_callback(bootstrap: str, topic: str) -> None:
    seen: list[Any] = []
    p = Producer({"bootstrap.servers": bootstrap, "on_delivery": lambda e, m: seen.append(m)})
    p.produce(topic, b"x", headers=[("a", b"b")])
    assert p.flush(10) == 0
    assert seen[0].headers() == Headers([("a", b"b")])
    p.close(timeout=5)


def test_headers_already_closed_are_rejected_up_front() -> None:
    for interceptors in ([], [Recorder()]):
        reports: list[Any] = []
        p = Producer(counting(reports), interceptors=interceptors)
        h = Headers([("a", b"1")])
        p.produce("t", b"v", headers=h)
        assert h.read_only  # handed to Kafka: closed
        with pytest.raises(ReadOnlyHeadersError, match=r"read-only.*Headers\(old_headers\)"):
            p.produce("t", b"v", headers=h)
        with pytest.raises(ReadOnlyHeadersError):
            p.send(ProducerRecord("t", b"v", headers=h))
        p.produce("t", b"v", headers=h.copy())
        assert queued(p, reports) == 2
        p.close(timeout=0)


@pytest.mark.parametrize("interceptors", [[], [Recorder()]])
def test_non_str_header_key_is_rejected_naming_it(interceptors: list[object]) -> None:
    reports: list[Any] = []
    p = Producer(counting(reports), interceptors=interceptors)
    with pytest.raises(TypeError, match=r"got bytes"):
        p.produce("t", b"v", headers=[("ok", b"1"), (b"k", b"v")])
    with pytest.raises(ValueError, match="must not be empty"):
        p.produce("t", b"v", headers=[("", b"v")])
    with pytest.raises((TypeError, ValueError)):
        p.produce("t", b"v", headers=[("a", b"1", b"2")])
    assert queued(p, reports) == 0
    p.close(timeout=0)


def test_on_send_failures_continue_with_last_good_record_and_are_counted(
    bootstrap: str, topic: str
) -> None:
    class Boom:
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            raise RuntimeError("boom")

    class ReturnsNone:
        def on_send(self, record: ProducerRecord) -> None:
            return None

    last = Recorder("last")
    p = Producer({"bootstrap.servers": bootstrap}, interceptors=[Boom(), ReturnsNone(), last])
    for i in range(3):
        p.produce(topic, b"v%d" % i, headers=[("i", str(i))])
    assert p.flush(10) == 0
    assert p.interceptors.errors == {"Boom": 3, "ReturnsNone": 3, "Recorder": 0}
    assert [r.value for r in last.sent] == [b"v0", b"v1", b"v2"]
    msgs = read_raw(bootstrap, topic, 3)
    assert [m.headers() for m in msgs] == [[("i", b"%d" % i), ("last", b"1")] for i in range(3)]
    p.close(timeout=5)


def test_strict_producer_raises_the_interceptors_error() -> None:
    class Boom:
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            raise RuntimeError("boom")

    reports: list[Any] = []
    rec = Recorder()
    p = Producer(counting(reports), interceptors=[Boom(), rec], strict=True)
    with pytest.raises(RuntimeError, match="boom"):
        p.produce("t", b"v")
    assert queued(p, reports) == 0
    assert rec.sent == []
    assert [type(err) for _, err, _ in rec.acks] == [RuntimeError]  # still acknowledged once
    p.close(timeout=0)


@pytest.mark.integration
def test_on_acknowledgement_once_per_record_on_success(bootstrap: str, topic: str) -> None:
    rec = Recorder()
    p = Producer({"bootstrap.servers": bootstrap}, interceptors=[rec])
    for i in range(5):
        p.produce(topic, b"v%d" % i, b"key")
    assert p.flush(10) == 0
    assert [(md.topic, md.partition, md.offset, err) for md, err, _ in rec.acks] == [
        (topic, 0, i, None) for i in range(5)
    ]
    md, _, headers = rec.acks[0]
    assert (md.serialized_key_size, md.serialized_value_size) == (3, 2)
    assert md.timestamp is not None
    assert headers.read_only
    assert headers.last_value("rec") == b"1"
    p.close(timeout=5)


def test_on_acknowledgement_once_on_delivery_failure() -> None:
    rec = Recorder()
    seen: list[Any] = []
    p = Producer({**UNREACHABLE, "message.timeout.ms": 200}, interceptors=[rec])
    p.produce("t", b"v", on_delivery=lambda e, m: seen.append((e, m.headers())))
    assert p.flush(10) == 0
    assert len(rec.acks) == 1
    md, err, headers = rec.acks[0]
    assert isinstance(err, KafkaError)
    assert err.code() == KafkaError._MSG_TIMED_OUT
    assert md.topic == "t"
    assert md.offset == -1
    assert seen == [(err, headers)]
    p.close(timeout=0)


@pytest.mark.integration
def test_on_acknowledgement_once_for_a_partition_that_does_not_exist(
    bootstrap: str, topic: str
) -> None:
    rec = Recorder()
    p = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 3000}, interceptors=[rec])
    p.list_topics(topic, timeout=5)  # delegated to confluent; metadata now known
    refused: list[int] = []
    try:
        p.produce(topic, b"v", partition=7)
    except KafkaException as exc:  # librdkafka may refuse at once (metadata known) ...
        refused.append(exc.args[0].code())
    p.flush(10)  # ... or fail the delivery
    assert refused in ([], [KafkaError._UNKNOWN_PARTITION])
    assert len(rec.acks) == 1
    md, err, _ = rec.acks[0]
    assert err is not None
    assert md.partition == 7
    p.close(timeout=5)


def test_on_acknowledgement_once_when_produce_raises_buffer_error() -> None:
    rec = Recorder()
    p = Producer({**UNREACHABLE, "queue.buffering.max.messages": 1}, interceptors=[rec])
    p.produce("t", b"first", partition=0)
    with pytest.raises(BufferError):
        p.produce("t", b"second", partition=2, headers=[("a", b"1")])
    assert len(rec.acks) == 1
    md, err, headers = rec.acks[0]
    assert isinstance(err, BufferError)
    assert (md.topic, md.partition) == ("t", 2)
    assert headers.last_value("a") == b"1"
    p.purge()
    p.poll(0)
    assert len(rec.acks) == 2  # the first record's failure (purged)
    p.close(timeout=0)


def test_serializer_failure_raises_serialization_error_and_acknowledges() -> None:
    class Failing:
        def serialize(self, topic: str, headers: Headers, data: Any) -> bytes:
            raise ValueError("cannot encode")

    rec = Recorder()
    reports: list[Any] = []
    p = Producer(counting(reports), interceptors=[rec], key_serializer=Failing())
    with pytest.raises(SerializationError, match=r"key serializer failed.*'orders'") as info:
        p.produce("orders", b"v", "k")
    assert (info.value.topic, info.value.field) == ("orders", "key")
    assert isinstance(info.value.__cause__, ValueError)
    assert len(rec.acks) == 1
    assert rec.acks[0][1] is info.value
    assert queued(p, reports) == 0
    p.close(timeout=0)


@pytest.mark.integration
def test_serializers_see_writable_headers_after_interceptors(bootstrap: str, topic: str) -> None:
    p = Producer(
        {"bootstrap.servers": bootstrap, "value.serializer": Utf8Serializer},
        interceptors=[Recorder()],
    )
    p.produce(topic, 12345, headers={"a": "b"})
    p.close(timeout=10)
    (msg,) = read_raw(bootstrap, topic, 1)
    assert msg.value() == b"12345"
    assert msg.headers() == [("a", b"b"), ("rec", b"1"), ("content-type", b"text/plain")]


@pytest.mark.integration
def test_send_calls_back_java_style(bootstrap: str, topic: str) -> None:
    seen: list[tuple[RecordMetadata, Any]] = []
    p = Producer({"bootstrap.servers": bootstrap})
    record = ProducerRecord(topic, b"v", b"k", [("a", b"1")], partition=0, timestamp=1234)
    p.send(record, lambda md, err: seen.append((md, err)))
    assert p.flush(10) == 0
    assert seen == [(RecordMetadata(topic, 0, 0, 1234, 1, 1), None)]
    assert record.headers.read_only
    p.close(timeout=5)


@pytest.mark.integration
def test_wrap_producer_owns_the_wrapped_producer(bootstrap: str, topic: str) -> None:
    raw = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    rec = Recorder()
    with wrap_producer(raw, interceptors=[rec]) as p:
        p.produce(topic, b"wrapped")
        assert p.wrapped is raw
    assert rec.closed == 1
    assert len(rec.acks) == 1
    with pytest.raises(RuntimeError, match="closed"):  # closed with the wrapper
        raw.produce(topic, b"raw")
    assert [m.value() for m in read_raw(bootstrap, topic, 1)] == [b"wrapped"]


def test_close_purges_what_was_not_delivered_and_acknowledges_it() -> None:
    rec = Recorder()
    p = Producer(UNREACHABLE, interceptors=[rec])
    p.produce("t", b"v")
    assert p.close(timeout=0.2) is False  # a record was left, and purged
    assert len(rec.acks) == 1
    assert rec.acks[0][1] is not None
    assert rec.closed == 1
    assert p.close() is True  # twice: no-op, True as confluent-kafka's


def test_one_produce_whatever_the_features() -> None:
    p = Producer(UNREACHABLE)
    q = Producer(UNREACHABLE, interceptors=[Recorder()])
    for x in (p, q):
        assert not hasattr(x, "__dict__")  # nothing swapped in per instance
        assert type(x).produce is Producer.produce
        x.close(timeout=0)


def test_a_subclass_keeps_its_class_and_methods() -> None:
    class Mine(Producer):
        __slots__ = ()

        def hello(self) -> str:
            return "mine"

    class OwnProduce(Producer):
        __slots__ = ()

        def produce(self, *args: Any, **kwargs: Any) -> None:
            raise NotImplementedError("mine")

    p = Mine(UNREACHABLE)
    assert type(p) is Mine
    assert p.hello() == "mine"
    p.close(timeout=0)
    q = OwnProduce(UNREACHABLE)
    with pytest.raises(NotImplementedError, match="mine"):
        q.produce("t", b"v")
    q.close(timeout=0)


KEYS = st.sampled_from(["k", "ключ", "", b"k", 1])
VALUES = st.sampled_from([b"v", b"", "wert", None, bytearray(b"ba"), memoryview(b"mv"), 3])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(KEYS, VALUES), max_size=4), st.booleans())
def test_produce_accepts_exactly_what_the_headers_model_accepts(
    pairs: list[tuple[Any, Any]], lean: bool
) -> None:
    try:
        expected: type[Exception] | None = None
        model = Headers(pairs)
    except (TypeError, ValueError) as exc:
        expected = type(exc)
    p = Producer(UNREACHABLE, interceptors=[] if lean else [Recorder()])
    sent: list[Any] = []
    real = p.wrapped.produce

    def spy(*args: Any) -> None:  # watches what reaches librdkafka
        real(*args)
        sent.append(args[-1])

    sender_of(p).hand = spy
    produce = p.produce
    try:
        if expected is None:
            produce("t", b"v", headers=pairs)
            assert len(sent) == 1
            wire = Headers(sent[0]).to_list() if sent[0] is not None else []
            assert wire == model.to_list() + ([] if lean else [("rec", b"1")])
        else:
            with pytest.raises(expected):
                produce("t", b"v", headers=pairs)
            assert sent == []
    finally:
        p.purge()
        p.close(timeout=0)


def test_a_bad_record_value_is_reported_as_such_not_blamed_on_headers() -> None:
    p = Producer(UNREACHABLE)
    with pytest.raises(TypeError, match="value of a record to topic 't' is int"):
        p.produce("t", 5, headers=[("a", b"1")])
    with pytest.raises(TypeError, match="value of a record to topic 't' is int"):
        p.produce("t", 5, headers=[("a", bytearray(b"1"))])
    with pytest.raises(TypeError, match="header 'a'"):
        p.produce("t", b"v", headers=[("a", 7)])
    p.close(timeout=0)


def test_no_delivery_callback_and_no_headers_unless_needed() -> None:
    class SendOnly:
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            return record

    calls: list[tuple[Any, ...]] = []
    p = Producer(UNREACHABLE, interceptors=[SendOnly()])
    sender_of(p).hand = lambda *args: calls.append(args)
    p.produce("t", b"v")  # on_send only: nobody needs a report
    p.produce("t", b"v", headers=[])
    p.produce("t", b"v", on_delivery=print)
    q = Producer(UNREACHABLE)
    sender_of(q).hand = lambda *args: calls.append(args)
    q.produce("t", b"v", headers=[])
    q.close(timeout=0)
    callbacks = [args[4] for args in calls]
    assert callbacks[:2] == [None, None]
    assert callable(callbacks[2])
    assert callbacks[3] is None
    assert [args[-1] for args in calls] == [None, None, None, None]  # no empty header list
    p.close(timeout=0)
