"""The async producer's per-record bookkeeping: each record's future, which is also its
delivery report, and the queue that takes reported futures to the event loop.

A record in flight keeps one object alive, its future (a :class:`Delivery`): librdkafka's
report, on the delivery thread, gives the message its read-only headers, stores the outcome
and queues the future; :meth:`Deliveries.settle`, on the loop, resolves it. A resolved
future, its message and the message's headers often wait thousands of records for their
caller's ``await``, and the cyclic collector scans every object that waits, again and again.
The compiled core takes from the collector those that cannot be part of a cycle kheaders
made: the delivered read-only headers (tuples of ``str`` and ``bytes``, no edit allowed), the
delivered message (its fields: those headers, the record's bytes, a KafkaError) and the future
once it holds its result (an error's traceback can refer back to its future: a failed or
cancelled one stays tracked). A cycle the caller builds through them (an attribute set on
the future that refers back to it, a message's value set to something holding the message)
is then never collected. Plain Python cannot untrack anything: the collector scans them all.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaException, Message

from kheaders._client.delivery import AckHook, metadata_of, read_only
from kheaders._client.outgoing import Kept
from kheaders._model.headers import received

if TYPE_CHECKING:
    from kheaders import _cython as cython
    from kheaders.aio._parking import ParkingProducer
else:
    try:  # the compiled core: Cython reads this import itself (pure-Python mode)
        import cython
    except ModuleNotFoundError:  # plain Python without Cython installed
        from kheaders import _cython as cython

SETTLE_CHUNK = 2000
"""Futures resolved in one turn of the loop: a burst of delivery reports never holds it long."""

_COMPILED: bool = cython.compiled
"""True in the compiled core (read once: plain Python then pays one global lookup)."""

if not cython.compiled:  # compiled: CPython's PyObject_GC_UnTrack (see _delivery.pxd)

    def _untrack(obj: object) -> None:
        """Plain Python cannot take an object from the collector: nothing is done."""


def _reported(fut: Delivery, msg: Any) -> None:
    """The compiled core's part of a report: the delivered message and the read-only
    headers the report built for it leave the collector (see the module doc)."""
    if type(msg) is Message:  # only objects the collector tracks may be untracked
        headers = msg.headers()
        if type(fut.sent) is tuple and headers is not None:  # built by the report
            _untrack(headers)
        _untrack(msg)


class Delivery(asyncio.Future):  # type: ignore[type-arg]
    """A record's future that is also its delivery report (a ``Carrier``: it carries the
    record's headers in ``sent``), so it is the only object the record keeps alive in flight:
    librdkafka's report, on the delivery thread, gives the message its read-only headers,
    stores the outcome and queues the future for the loop, which resolves it."""

    __slots__ = ("_err", "_queue", "_value", "sent")
    _err: Any
    _queue: Callable[[Delivery], None]
    _value: Any
    sent: Kept

    def __call__(self, err: Any, msg: Any, /) -> None:  # confluent's (err, msg)
        sent = self.sent
        msg.set_headers(received(sent) if type(sent) is tuple else sent)
        if _COMPILED:
            _reported(self, msg)
        self._err = err
        self._value = msg
        self._queue(self)


class Acked(Delivery):
    """For a producer whose interceptors only acknowledge: the record's only report runs
    their ``on_acknowledgement`` first (on the delivery thread, as any report), then is
    queued for the loop even when an interceptor raised (strict mode: that error then
    reaches the delivery thread's log, the record's future its outcome)."""

    __slots__ = ("_ack",)
    _ack: AckHook

    def __call__(self, err: Any, msg: Any, /) -> None:
        headers = read_only(self.sent)
        try:
            self._ack(metadata_of(msg), err, headers)
        finally:
            msg.set_headers(headers)
            self._err = err
            self._value = msg
            self._queue(self)


class Sent(Delivery):
    """For ``send``: Java's ``(metadata, err)`` callback."""

    __slots__ = ()

    def __call__(self, md: Any, err: Any, /) -> None:
        self._err = err
        self._value = md
        self._queue(self)


class Metadata(Delivery):
    """For ``send`` on a lean producer (the carried path): librdkafka's ``(err, msg)``
    kept as the record's RecordMetadata, the future the only object in flight."""

    __slots__ = ()

    def __call__(self, err: Any, msg: Any, /) -> None:
        self._err = err
        self._value = metadata_of(msg)
        self._queue(self)


class Deliveries:
    """Delivery reports on their way from librdkafka's callbacks to the loop's futures.

    Holds no reference to the AIOProducer, so the poll thread does not keep it alive.
    """

    __slots__ = ("append", "done", "loop", "raw", "room", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop, raw: ParkingProducer) -> None:
        self.loop = loop
        self.raw = raw
        self.done: deque[Delivery] = deque()
        self.append = self.done.append
        self.scheduled = False
        self.room = asyncio.Event()

    def served(self) -> None:
        """After callbacks ran (any thread): have the loop settle them, once per batch."""
        if not self.scheduled and (self.done or self.raw.parked):
            self.scheduled = True
            self.loop.call_soon_threadsafe(self.settle)

    def settle(self) -> None:
        """On the loop: move parked records into the room freed, resolve the futures."""
        self.scheduled = False
        raw = self.raw
        if raw.parked:
            raw.unpark()
            if not raw.parked:
                self.room.set()
        done = self.done
        pop = done.popleft
        untrack = _COMPILED
        for _ in range(min(len(done), SETTLE_CHUNK)):
            fut = pop()
            try:
                if fut._err is None:
                    fut.set_result(fut._value)
                    if untrack:  # it holds its result: see the module doc
                        _untrack(fut)
                else:
                    fut.set_exception(KafkaException(fut._err))
            except asyncio.InvalidStateError:  # cancelled by its owner
                pass
        if done and not self.scheduled:  # the rest after the loop's other callbacks
            self.scheduled = True
            self.loop.call_soon(self.settle)
