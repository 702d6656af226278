"""The async producer's per-record bookkeeping: each record's future, which is also its
delivery report, and the queue that takes reported futures to the event loop.

A record in flight keeps one object alive, its future (a :class:`Delivery`): librdkafka's
report, on the delivery thread, gives the message its read-only headers, stores the outcome
and queues the future; :meth:`Deliveries.settle`, on the loop, resolves it. What a resolved
future holds until its caller awaits it (often thousands of records later) is what the
cyclic collector scans again and again; the compiled core tells the collector to skip the
delivered read-only headers, which cannot be part of a cycle.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaException

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
        """Plain Python cannot take an object from the collector: never called there."""
        raise NotImplementedError("the collector's untracking needs the compiled core")


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
        headers = self.sent
        if type(headers) is tuple:
            headers = received(headers)
            if _COMPILED:  # read-only, of str and bytes: never part of a cycle, so the
                _untrack(headers)  # collector need not scan it (as CPython's own tuples)
        msg.set_headers(headers)
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
        for _ in range(min(len(done), SETTLE_CHUNK)):
            fut = pop()
            try:
                if fut._err is None:
                    fut.set_result(fut._value)
                else:
                    fut.set_exception(KafkaException(fut._err))
            except asyncio.InvalidStateError:  # cancelled by its owner
                pass
        if done and not self.scheduled:  # the rest after the loop's other callbacks
            self.scheduled = True
            self.loop.call_soon(self.settle)
