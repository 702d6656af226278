"""kheaders.Consumer: read-only Headers, deserializers, failure policy, interceptors, commits."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, Message, TopicPartition

from kheaders import Consumer, DeserializationError, Headers, ReadOnlyHeadersError, wrap_consumer
from kheaders.broker import fast_consumer_config
from tests.support.interceptors import Recorder, Utf8Deserializer

BAD_UTF8 = b"\xff\xfe"


def produce_raw(bootstrap: str, topic: str, records: list[tuple[Any, Any, Any]]) -> None:
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for key, value, headers in records:
        p.produce(topic, value, key, headers=headers)
    assert p.flush(10) == 0


def assigned(bootstrap: str, topic: str, **kwargs: Any) -> Consumer:
    extra = kwargs.pop("config", {})
    c = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4().hex[:6]}", **extra},
        **kwargs,
    )
    c.assign([TopicPartition(topic, 0, 0)])
    return c


def poll_one(c: Consumer, timeout: float = 10) -> Message:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = c.poll(0.1)
        if msg is not None:
            return msg
    raise AssertionError("no record within the timeout")


@pytest.mark.integration
def test_headers_are_read_only_headers_and_empty_not_none(bootstrap: str, topic: str) -> None:
    headers = [("dup", b"1"), ("null", None), ("empty", b""), ("dup", b"2"), ("ключ", b"\x00")]
    produce_raw(bootstrap, topic, [(b"k", b"v", headers), (None, None, None)])
    c = assigned(bootstrap, topic)
    first, second = poll_one(c), poll_one(c)
    c.close()
    h = first.headers()
    assert isinstance(h, Headers)
    assert h.read_only
    assert list(h) == headers
    assert h.values("dup") == [b"1", b"2"]
    with pytest.raises(ReadOnlyHeadersError, match="writable copy"):
        h.add("x", b"1")
    assert second.headers() == Headers()
    assert second.headers().read_only
    assert (second.key(), second.value()) == (None, None)


@pytest.mark.integration
def test_consume_batches_wrap_headers_and_deserialize(bootstrap: str, topic: str) -> None:
    produce_raw(
        bootstrap,
        topic,
        [(b"k%d" % i, "wert-ü%d".encode() % i, [("i", b"%d" % i)]) for i in range(5)],
    )
    seen: list[tuple[str, Headers, bytes | None]] = []

    class Spy(Utf8Deserializer):
        def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> Any:
            seen.append((topic, headers, data))
            return super().deserialize(topic, headers, data)

    c = assigned(bootstrap, topic, key_deserializer=Utf8Deserializer(), value_deserializer=Spy())
    got: list[Message] = []
    for _ in range(100):
        got += c.consume(10, 0.1)
        if len(got) >= 5:
            break
    c.close()
    assert [(m.key(), m.value()) for m in got] == [(f"k{i}", f"wert-ü{i}") for i in range(5)]
    assert [m.headers().last_value("i") for m in got] == [b"%d" % i for i in range(5)]
    assert seen[0] == (topic, got[0].headers(), "wert-ü0".encode())


@pytest.mark.integration
def test_poll_deserialization_failure_carries_raw_record_and_consumer_moves_on(
    bootstrap: str, topic: str
) -> None:
    produce_raw(
        bootstrap,
        topic,
        [(b"a", b"ok1", None), (b"b", BAD_UTF8, [("h", b"1")]), (b"c", b"ok2", None)],
    )
    rec = Recorder()
    c = assigned(bootstrap, topic, value_deserializer=Utf8Deserializer(), interceptors=[rec])
    assert poll_one(c).value() == "ok1"
    with pytest.raises(DeserializationError, match=r"value deserializer.*offset 1") as info:
        poll_one(c)
    raw = info.value.message
    assert (raw.key(), raw.value(), raw.offset()) == (b"b", BAD_UTF8, 1)
    assert list(raw.headers()) == [("h", b"1")]
    assert info.value.field == "value"
    assert isinstance(info.value.__cause__, UnicodeDecodeError)
    assert poll_one(c).value() == "ok2"
    c.close()
    assert [[m.offset() for m in batch] for batch in rec.consumed] == [[0], [2]]


class StubConsumer:
    """Stands in for librdkafka only to hand consume() fixed batches (no wire involved)."""

    def __init__(self, batches: list[list[Message]]) -> None:
        self.batches = batches
        self.closed = False

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        return self.batches.pop(0) if self.batches else []

    def poll(self, timeout: float = -1) -> Message | None:
        batch = self.consume()
        return batch[0] if batch else None

    def close(self) -> None:
        self.closed = True


def msg(offset: int, value: bytes) -> Message:
    return Message(topic="t", partition=0, offset=offset, key=b"k", value=value, headers=None)


def test_consume_returns_good_records_then_raises_kept_failures_in_order() -> None:
    stub = StubConsumer(
        [[msg(0, b"a"), msg(1, BAD_UTF8), msg(2, b"c"), msg(3, BAD_UTF8)], [msg(4, b"e")]]
    )
    c = wrap_consumer(stub, value_deserializer=Utf8Deserializer())  # type: ignore[arg-type]
    assert [m.value() for m in c.consume(10)] == ["a", "c"]
    with pytest.raises(DeserializationError) as first:
        c.consume(10)
    with pytest.raises(DeserializationError) as second:
        c.poll(1)
    assert (first.value.message.offset(), second.value.message.offset()) == (1, 3)
    assert [m.value() for m in c.consume(10)] == ["e"]
    c.close()
    assert stub.closed


def test_batch_with_no_good_record_raises_at_once_and_keeps_the_rest() -> None:
    stub = StubConsumer([[msg(0, BAD_UTF8), msg(1, BAD_UTF8)], [msg(2, b"ok")]])
    c = wrap_consumer(stub, value_deserializer=Utf8Deserializer())  # type: ignore[arg-type]
    with pytest.raises(DeserializationError) as first:
        c.consume(10)
    with pytest.raises(DeserializationError) as second:
        c.consume(10)
    assert (first.value.message.offset(), second.value.message.offset()) == (0, 1)
    assert [m.value() for m in c.consume(10)] == ["ok"]


def test_error_events_pass_through_untouched_and_interceptors_see_records_only() -> None:
    eof = Message(topic="t", partition=0, offset=3, error=KafkaError(KafkaError._PARTITION_EOF))
    rec = Recorder()
    stub = StubConsumer([[msg(0, b"a"), eof], [eof]])
    c = wrap_consumer(stub, interceptors=[rec])  # type: ignore[arg-type]
    out = c.consume(10)
    assert out[0].value() == b"a"
    assert out[1] is eof
    assert eof.headers() is None  # untouched
    assert c.poll(1) is eof
    assert [[m.offset() for m in b] for b in rec.consumed] == [[0]]


def test_on_consume_may_filter_a_batch() -> None:
    class DropB:
        def on_consume(self, messages: list[Message]) -> list[Message]:
            return [m for m in messages if m.value() != b"b"]

    stub = StubConsumer([[msg(0, b"a"), msg(1, b"b")], [msg(2, b"b")]])
    c = wrap_consumer(stub, interceptors=[DropB()])  # type: ignore[arg-type]
    assert [m.value() for m in c.consume(10)] == [b"a"]
    assert c.poll(1) is None


def test_records_an_on_consume_adds_to_a_poll_are_returned_later_not_dropped() -> None:
    class AddTwo:
        def on_consume(self, messages: list[Message]) -> list[Message]:
            return [*messages, msg(8, b"x"), msg(9, b"y")]

    stub = StubConsumer([[msg(0, b"a")], [msg(1, b"b")]])
    c = wrap_consumer(stub, interceptors=[AddTwo()])  # type: ignore[arg-type]
    first = c.poll(1)
    assert first is not None
    assert first.value() == b"a"
    assert [m.value() for m in c.consume(1)] == [b"x"]  # kept ones first, at most num_messages
    second = c.poll(1)
    assert second is not None
    assert second.value() == b"y"
    assert [m.value() for m in c.consume(10)] == [b"b", b"x", b"y"]


@pytest.fixture
def committed_topic(bootstrap: str, topic: str) -> str:
    produce_raw(bootstrap, topic, [(None, b"v%d" % i, None) for i in range(3)])
    return topic


@pytest.mark.integration
def test_on_commit_after_sync_commit(bootstrap: str, committed_topic: str) -> None:
    rec = Recorder()
    no_auto = {"enable.auto.commit": False}
    c = assigned(bootstrap, committed_topic, interceptors=[rec], config=no_auto)
    m = poll_one(c)
    result = c.commit(message=m, asynchronous=False)
    assert result is not None
    assert [(tp.topic, tp.offset) for tp in rec.commits[0]] == [(committed_topic, 1)]
    c.close()
    assert len(rec.commits) == 1  # once: the sync commit does not also come as a callback


def wait_for(cond: Callable[[], bool], c: Consumer, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        c.poll(0.1)


@pytest.mark.integration
def test_on_commit_after_async_commit_then_users_callback(
    bootstrap: str, committed_topic: str
) -> None:
    rec = Recorder()
    order: list[str] = []
    rec_commit = rec.on_commit
    rec.on_commit = lambda offsets: (order.append("interceptor"), rec_commit(offsets))  # type: ignore[method-assign]
    user = lambda err, parts: order.append("user")  # noqa: E731
    c = assigned(
        bootstrap,
        committed_topic,
        interceptors=[rec],
        config={"on_commit": user, "enable.auto.commit": False},
    )
    m = poll_one(c)
    poll_one(c)
    assert c.commit(message=m) is None  # asynchronous
    wait_for(lambda: bool(rec.commits), c)
    assert [tp.offset for tp in rec.commits[0]] == [1]
    assert order == ["interceptor", "user"]
    c.close()


@pytest.mark.integration
def test_on_commit_after_auto_commit(bootstrap: str, committed_topic: str) -> None:
    rec = Recorder()
    config = fast_consumer_config(
        bootstrap, f"auto-{uuid.uuid4().hex[:6]}", **{"auto.commit.interval.ms": 200}
    )
    c = Consumer(config, interceptors=[rec])
    c.subscribe([committed_topic])
    for _ in range(3):
        poll_one(c, timeout=30)
    wait_for(lambda: any(tp.offset == 3 for b in rec.commits for tp in b), c)
    c.close()


@pytest.mark.integration
def test_wrap_consumer_gives_headers_and_closes_the_consumer(bootstrap: str, topic: str) -> None:
    produce_raw(bootstrap, topic, [(b"k", b"v", [("a", b"1")])])
    raw = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "w"})
    raw.assign([TopicPartition(topic, 0, 0)])
    rec = Recorder()
    with wrap_consumer(raw, interceptors=[rec]) as c:
        m = poll_one(c)
        assert m.headers() == Headers([("a", b"1")])
        assert c.wrapped is raw
        assert c.assignment()[0].topic == topic  # delegated
    assert rec.closed == 1
    with pytest.raises(RuntimeError):
        raw.poll(0)


class Broken:
    def on_consume(self, messages: list[Message]) -> list[Message]:
        raise RuntimeError("broken interceptor")


def test_failing_on_consume_is_skipped_or_raised_when_strict() -> None:
    c = wrap_consumer(StubConsumer([[msg(0, b"a")]]), interceptors=[Broken()])  # type: ignore[arg-type]
    assert [m.value() for m in c.consume(10)] == [b"a"]
    assert c.interceptors.errors == {"Broken": 1}
    strict = wrap_consumer(
        StubConsumer([[msg(0, b"a")]]),  # type: ignore[arg-type]
        interceptors=[Broken()],
        strict=True,
    )
    with pytest.raises(RuntimeError, match="broken interceptor"):
        strict.poll(1)


def test_close_raises_failures_that_were_never_raised() -> None:
    from kheaders import HeldFailuresError

    stub = StubConsumer([[msg(0, b"a"), msg(1, BAD_UTF8)]])
    c = wrap_consumer(stub, value_deserializer=Utf8Deserializer())  # type: ignore[arg-type]
    c.consume(10)
    with pytest.raises(HeldFailuresError) as caught:
        c.close()
    assert [e.message.offset() for e in caught.value.exceptions] == [1]  # type: ignore[union-attr]
    c.close()  # twice: no-op


def test_every_record_of_a_batch_gets_read_only_headers_equal_to_what_librdkafka_gave() -> None:
    pairs = [[("a", b"1"), ("a", None)], [("b", b"")], None, [("c", b"3")]]
    batch = [
        Message(topic="t", partition=0, offset=i, value=b"v", headers=h)
        for i, h in enumerate(pairs)
    ]
    eof = Message(topic="t", partition=0, offset=4, error=KafkaError(KafkaError._PARTITION_EOF))
    stub = StubConsumer([list(batch), [*batch[-1:], eof]])
    c = wrap_consumer(stub)  # type: ignore[arg-type]
    out = c.consume(10)
    assert out == batch
    for m, h in zip(out, pairs, strict=True):
        got = m.headers()
        assert type(got) is Headers
        assert got.read_only
        assert got == (h or [])
        with pytest.raises(ReadOnlyHeadersError):
            got.add("x", b"y")
    out = c.consume(10)  # a batch with an error event: the event stays untouched
    assert out[1] is eof
    assert eof.headers() is None


def test_records_that_are_not_confluent_messages_get_headers_too() -> None:
    class Record:
        """Any object with confluent's Message methods (a test double, say)."""

        def __init__(self, headers: list[tuple[str, bytes]] | None) -> None:
            self._headers: object = headers

        def headers(self) -> object:
            return self._headers

        def set_headers(self, headers: object) -> None:
            self._headers = headers

        def error(self) -> None:
            return None

    records = [Record([("a", b"1")]), Record(None)]
    mixed = [Message(topic="t", headers=[("m", b"1")]), Record([("r", b"2")])]
    c = wrap_consumer(StubConsumer([records, mixed]))  # type: ignore[arg-type, list-item]
    assert [m.headers() for m in c.consume(10)] == [[("a", b"1")], []]
    assert all(type(m.headers()) is Headers for m in records)
    assert [m.headers() for m in c.consume(10)] == [[("m", b"1")], [("r", b"2")]]
    assert all(m.headers().read_only for m in mixed)
