"""The async producer's per-record bookkeeping: each record's future, which is also its
delivery report, and the queue that takes reported futures to the event loop.

A record in flight keeps one object alive, its future (a :class:`Delivery`, a
:class:`~kheaders._client.reports.Carrier`): librdkafka's report, on the delivery thread, runs
the producer's :class:`~kheaders._client.reports.Reporter` (the sync producer's: the message's
read-only headers, interceptors' ``on_acknowledgement``), stores the outcome and queues the
future; :meth:`Deliveries.settle`, on the loop, resolves it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaException

from kheaders._client.reports import EMPTY, Kept, Reporter, metadata_of

if TYPE_CHECKING:
    from kheaders.aio._parking import ParkingProducer

SETTLE_CHUNK = 2000
"""Futures resolved in one turn of the loop: a burst of delivery reports never holds it long."""


class Delivery(asyncio.Future):  # type: ignore[type-arg]
    """A record's future that is also its delivery report: resolves to the delivered message
    (its ``headers()`` the record's read-only Headers) or fails with KafkaException. Queued
    for the loop even when an interceptor's ``on_acknowledgement`` raised (strict mode: that
    error reaches the delivery thread, the future its outcome)."""

    __slots__ = ("_err", "_to", "_value", "sent")
    _err: Any
    _value: Any

    def __init__(self, to: Deliveries) -> None:
        super().__init__(loop=to.loop)
        self._to = to
        self.sent: Kept = EMPTY

    def __call__(self, err: Any, msg: Any, /) -> None:  # confluent's (err, msg)
        to = self._to
        self._err = err
        self._value = msg
        try:
            to.reporter.reported(self.sent, err, msg)
        finally:
            to.append(self)


class Metadata(Delivery):
    """For ``send``: resolves to the record's RecordMetadata."""

    __slots__ = ()

    def __call__(self, err: Any, msg: Any, /) -> None:
        to = self._to
        self._err = err
        self._value = None
        try:
            self._value = to.reporter.reported(self.sent, err, msg)
        finally:
            if self._value is None:
                self._value = metadata_of(msg)
            to.append(self)


class Deliveries:
    """Delivery reports on their way from librdkafka's callbacks to the loop's futures.

    Holds no reference to the AIOProducer, so the poll thread does not keep it alive.
    """

    __slots__ = ("append", "done", "loop", "raw", "reporter", "room", "scheduled")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, raw: ParkingProducer, reporter: Reporter
    ) -> None:
        self.loop = loop
        self.raw = raw
        self.reporter = reporter
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
