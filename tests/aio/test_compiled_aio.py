"""kheaders.aio's compiled bookkeeping is its Python: the same outcomes on any input.

``kheaders.aio._delivery`` (each record's future, which is also its delivery report, and the
queue that takes reported futures to the loop) is called on the installed module (the
extension where the build compiled it) and on its ``.py`` loaded side by side
(``tests.support.cores``), with hostile reports: odd errors, messages that are not messages,
headers of any text and bytes, acknowledgement hooks that raise, futures cancelled by their
owner, more reports than one turn of the loop settles. Both cores leave every object to the
collector: a cycle user code closes through a delivered message or its future is freed. No
broker: the futures are driven by hand on an event loop of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Message
from hypothesis import given, settings
from hypothesis import strategies as st

import kheaders
from kheaders._client.records import RecordMetadata
from kheaders._client.reports import Reporter, read_only
from kheaders._model.headers import Headers, received
from tests.support.cores import installed, is_compiled, pure

MODULE = "kheaders.aio._delivery"

PINNED: frozenset[str] = frozenset(
    {
        f"{MODULE}.Delivery.__init__",
        f"{MODULE}.Delivery.__call__",
        f"{MODULE}.Metadata.__call__",
        f"{MODULE}.Deliveries.__init__",
        f"{MODULE}.Deliveries.served",
        f"{MODULE}.Deliveries.settle",
        # the classes themselves: made and called by the properties below on both cores
        f"{MODULE}.Delivery",
        f"{MODULE}.Metadata",
        f"{MODULE}.Deliveries",
    }
)
"""The functions of the compiled modules these properties pin (compiled == pure)."""

CORES = ("installed", "pure")


def _core(kind: str) -> ModuleType:
    return installed(MODULE) if kind == "installed" else pure(MODULE)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


# -- hostile inputs ----------------------------------------------------------------------------

_pairs = st.lists(
    st.tuples(
        st.text(min_size=1, max_size=12),
        st.one_of(st.none(), st.binary(max_size=24)),
    ),
    max_size=6,
).map(tuple)
_errors = st.one_of(
    st.none(),
    st.sampled_from([KafkaError._MSG_TIMED_OUT, KafkaError._PURGE_QUEUE, KafkaError.UNKNOWN]).map(
        KafkaError
    ),
    st.sampled_from(["text", 0, b"\x00"]),  # not what librdkafka gives: kept as given
)
_message_args = st.fixed_dictionaries(
    {
        "topic": st.text(max_size=10),
        "partition": st.integers(-1, 3),
        "offset": st.integers(-1001, 10**6),
        "key": st.one_of(st.none(), st.binary(max_size=8)),
        "value": st.one_of(st.none(), st.binary(max_size=8)),
    }
)
"""A delivered message's fields (a fresh Message of them for each core)."""


def _message(fields: dict[str, Any]) -> Message:
    return Message(**fields)


_not_messages = st.sampled_from([None, 0, "msg", b"msg", object()])


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def _deliveries(
    kind: str, loop: asyncio.AbstractEventLoop, ack: Any = None, raw: Any = None
) -> Any:
    """A Deliveries of core ``kind`` whose reporter runs ``ack`` (when given)."""
    return _core(kind).Deliveries(loop, raw or _Raw(0, 0), Reporter(ack, share=False))


def _state(fut: Any, deliveries: Any) -> tuple[Any, ...]:
    """What a report left behind, comparable across cores."""
    value = getattr(fut, "_value", "<unset>")
    if isinstance(value, Message):
        value = (value.topic(), value.partition(), value.offset(), _listed(value.headers()))
    elif isinstance(value, RecordMetadata):
        value = (value.topic, value.partition, value.offset, value.serialized_key_size)
    return (getattr(fut, "_err", "<unset>"), value, [q is fut for q in deliveries.done])


def _listed(headers: Any) -> Any:
    return None if headers is None else (type(headers).__name__, list(headers))


def _report(
    kind: str, cls: str, loop: asyncio.AbstractEventLoop, sent: Any, args: Any, ack: Any = None
) -> tuple[Any, ...]:
    """Make a future of class ``cls`` of core ``kind``, call it with ``args``; its outcome."""
    deliveries = _deliveries(kind, loop, ack)
    fut = getattr(_core(kind), cls)(deliveries)
    fut.sent = sent
    return (_outcome(lambda: fut(*args)), _state(fut, deliveries))


# -- Delivery: the carried record's report -----------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(_pairs, _errors, _message_args)
def test_a_record_report_agrees(pairs: Any, err: Any, fields: dict[str, Any]) -> None:
    loop = asyncio.new_event_loop()
    try:
        outcomes = []
        for kind in CORES:
            msg = Message(**fields)
            outcomes.append(_report(kind, "Delivery", loop, pairs, (err, msg)))
            assert msg.headers() == received(pairs)
            headers = msg.headers()
            assert isinstance(headers, Headers)
            assert headers.read_only
        assert outcomes[0] == outcomes[1]
    finally:
        loop.close()


@settings(max_examples=60, deadline=None)
@given(st.one_of(_pairs, st.just(received([("k", b"v")]))), _errors, _not_messages)
def test_a_report_of_no_message_fails_alike(sent: Any, err: Any, msg: Any) -> None:
    loop = asyncio.new_event_loop()
    try:
        a = _report("installed", "Delivery", loop, sent, (err, msg))
        b = _report("pure", "Delivery", loop, sent, (err, msg))
        assert a == b
        assert a[0][0] == "AttributeError"  # librdkafka never does this; queued all the same
    finally:
        loop.close()


def test_closed_headers_are_delivered_as_they_are(loop: asyncio.AbstractEventLoop) -> None:
    """Closed Headers a caller passed are the ones the message shows (not copied, tracked
    as the caller's objects are); a snapshot tuple becomes new read-only Headers."""
    closed = Headers([("a", b"1")])
    closed.close()
    for kind in CORES:
        fut = _core(kind).Delivery(_deliveries(kind, loop))
        fut.sent = closed
        msg = Message(topic="t")
        fut(None, msg)
        assert msg.headers() is closed
        assert gc.is_tracked(closed)


@pytest.mark.parametrize("kind", CORES)
def test_the_collector_sees_every_delivered_object(
    kind: str, loop: asyncio.AbstractEventLoop
) -> None:
    """On both cores the message, the headers its report built and the resolved future stay
    where the collector sees them (nothing is taken from it)."""
    module = _core(kind)
    closed = Headers([("a", b"1")])
    closed.close()
    deliveries = _deliveries(kind, loop)
    messages = []
    for sent in ((("traceparent", b"00-x"), ("k", None)), closed):
        fut = module.Delivery(deliveries)
        fut.sent = sent
        msg = Message(topic="t")
        fut(None, msg)
        messages.append(msg)
    futures = list(deliveries.done)
    deliveries.settle()
    built, given = messages
    headers = built.headers()
    assert headers == [("traceparent", b"00-x"), ("k", None)]
    assert [gc.is_tracked(o) for o in (*futures, built, given, headers, closed)] == [True] * 6
    assert given.headers() is closed
    with pytest.raises(kheaders.ReadOnlyHeadersError):
        headers.add("x", b"y")


class _Holder:
    """User code's object, closing a cycle through what a delivery gave it."""

    back: Any = None


@pytest.mark.parametrize("kind", CORES)
@pytest.mark.parametrize("through", ["message", "future", "headers"])
def test_a_cycle_user_code_closes_through_a_delivery_is_collected(kind: str, through: str) -> None:
    """A delivered message whose value is set to an object referring back to it
    (``Message.set_value``), a resolved future an object refers back to from its result, and
    read-only headers held by the message they belong to: each cycle is freed by the
    collector once the caller drops it, on both cores."""
    loop = asyncio.new_event_loop()
    try:
        module = _core(kind)
        deliveries = _deliveries(kind, loop)
        fut = module.Delivery(deliveries)
        fut.sent = (("k", b"v"),)
        fut(None, Message(topic="t", value=b"v"))
        deliveries.settle()
        msg = loop.run_until_complete(fut)
        holder = _Holder()
        if through == "message":
            holder.back = msg
            msg.set_value(holder)
        elif through == "future":
            holder.back = fut
            msg.set_value(holder)  # the future's result refers to the holder, and back
        else:
            holder.back = msg.headers()
            msg.set_headers([holder, holder.back])  # any object, as confluent stores it
            holder.back = msg
        ref = weakref.ref(holder)
        del holder, msg, fut
        gc.collect()
        assert ref() is None
    finally:
        loop.close()


@pytest.mark.parametrize("kind", CORES)
def test_failed_and_cancelled_futures_are_collected_too(kind: str) -> None:
    """A failed future (its error's traceback refers back to it through the awaiting
    frame), a cancelled one and a resolved one: all freed once their caller drops them."""
    module = _core(kind)
    loop = asyncio.new_event_loop()
    try:
        deliveries = _deliveries(kind, loop)
        futures = []
        for err, cancel in ((None, False), (KafkaError(KafkaError._MSG_TIMED_OUT), False),
                            (None, True)):  # fmt: skip
            fut = module.Delivery(deliveries)
            fut.sent = (("k", b"v"),)
            fut(err, Message(topic="t"))
            if cancel:
                fut.cancel()
            futures.append(fut)
        deliveries.settle()
        assert all(gc.is_tracked(f) for f in futures)

        async def awaiting(fut: Any) -> None:
            with contextlib.suppress(KafkaException, asyncio.CancelledError):
                await fut

        refs = [weakref.ref(f) for f in futures]
        for f in futures:
            loop.run_until_complete(awaiting(f))
        del futures, fut, f
        gc.collect()
        assert [r() for r in refs] == [None, None, None]
    finally:
        loop.close()


# -- acknowledging reports, Metadata ----------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(_pairs, _errors, _message_args, st.sampled_from(["returns", "raises"]))
def test_an_acknowledging_report_agrees(
    pairs: Any, err: Any, fields: dict[str, Any], hook: str
) -> None:
    loop = asyncio.new_event_loop()
    try:
        outcomes = []
        for kind in CORES:
            seen: list[Any] = []

            def ack(md: RecordMetadata, e: Any, headers: Headers, seen: list[Any] = seen) -> None:
                seen.append((md.topic, md.partition, md.offset, e, list(headers)))
                if hook == "raises":
                    raise ValueError("interceptor failed")

            copy = Message(**fields)
            result = _report(kind, "Delivery", loop, pairs, (err, copy), ack)
            outcomes.append((result, seen, _listed(copy.headers())))
        assert outcomes[0] == outcomes[1]
        assert outcomes[0][1][0][4] == list(read_only(pairs))
    finally:
        loop.close()


@settings(max_examples=80, deadline=None)
@given(_errors, _message_args)
def test_send_reports_agree(err: Any, fields: dict[str, Any]) -> None:
    loop = asyncio.new_event_loop()
    msg = Message(**fields)
    try:
        for args in ((err, msg), (err, 7)):
            for ack in (None, lambda md, e, h: None):
                a = _report("installed", "Metadata", loop, (("k", b"v"),), args, ack)
                b = _report("pure", "Metadata", loop, (("k", b"v"),), args, ack)
                assert a == b
    finally:
        loop.close()


# -- Deliveries: from the delivery thread to the loop ------------------------------------------


class _Raw:
    """The parking producer's part the queue uses: records waiting for room."""

    def __init__(self, parked: int, room: int) -> None:
        self.parked: deque[int] = deque(range(parked))
        self.room = room
        self.unparked = 0

    def unpark(self) -> None:
        while self.parked and self.room:
            self.parked.popleft()
            self.room -= 1
            self.unparked += 1


def _settled(fut: asyncio.Future[Any]) -> Any:
    if fut.cancelled():
        return "cancelled"
    if not fut.done():
        return "pending"
    exc = fut.exception()
    if exc is not None:
        return (type(exc).__name__, repr(exc.args))
    return fut.result()


def _drive(kind: str, reports: list[tuple[Any, bool]], parked: int, room: int) -> Any:
    """Queue ``reports`` ((error, cancelled first) each) on a Deliveries of core ``kind``,
    as the delivery thread does, then run the loop until it settled them."""
    module = _core(kind)
    loop = asyncio.new_event_loop()
    try:
        raw = _Raw(parked, room)
        deliveries = _deliveries(kind, loop, raw=raw)
        futures = []
        for i, (err, cancel) in enumerate(reports):
            fut = module.Delivery(deliveries)
            fut.sent = ()
            fut(err, Message(topic="t", offset=i))
            if cancel:
                fut.cancel()
            futures.append(fut)
        deliveries.served()
        scheduled = deliveries.scheduled
        deliveries.served()  # once per batch: nothing more scheduled
        turns = 0
        while (deliveries.done or deliveries.scheduled) and turns < 100:
            loop.run_until_complete(asyncio.sleep(0))
            turns += 1
        outcomes = [
            o.offset() if isinstance(o, Message) else o for o in (_settled(f) for f in futures)
        ]
        return (scheduled, turns, outcomes, list(raw.parked), raw.unparked,
                deliveries.room.is_set(), len(deliveries.done))  # fmt: skip
    finally:
        loop.close()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(_errors, st.booleans()), max_size=40),
    st.integers(0, 5),
    st.integers(0, 5),
)
def test_the_queue_to_the_loop_agrees(reports: Any, parked: int, room: int) -> None:
    a = _drive("installed", reports, parked, room)
    assert a == _drive("pure", reports, parked, room)
    assert a[-1] == 0  # every report settled


def test_a_burst_is_settled_over_several_turns_alike() -> None:
    chunk = installed(MODULE).SETTLE_CHUNK
    assert chunk == pure(MODULE).SETTLE_CHUNK
    reports = [(None if i % 3 else KafkaError(KafkaError._MSG_TIMED_OUT), i % 7 == 0)
               for i in range(chunk * 2 + 5)]  # fmt: skip
    a = _drive("installed", reports, 0, 0)
    assert a == _drive("pure", reports, 0, 0)
    assert a[2][1] == 1
    assert a[2][3] == (KafkaException.__name__, repr((KafkaError(KafkaError._MSG_TIMED_OUT),)))
    for kind in CORES:  # one turn settles one chunk, and asks for another turn
        module = _core(kind)
        loop = asyncio.new_event_loop()
        try:
            deliveries = _deliveries(kind, loop)
            for i in range(chunk + 5):
                fut = module.Delivery(deliveries)
                fut.sent = ()
                fut(None, Message(topic="t", offset=i))
            deliveries.settle()
            assert (len(deliveries.done), deliveries.scheduled) == (5, True), kind
        finally:
            loop.close()


def test_the_compiled_core_is_the_extension_when_built() -> None:
    assert is_compiled(installed(MODULE)) is kheaders.COMPILED
    assert not is_compiled(pure(MODULE))
