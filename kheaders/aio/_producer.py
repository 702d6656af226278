"""AIOProducer: kheaders' Producer for asyncio, delivery reports as futures.

Per record, on the loop thread and in the calling task (so the tracing interceptor sees the
task's current span): the kheaders Producer's own ``produce`` runs the interceptors, the
serializers and the limit check and hands the record to librdkafka, which never waits there.
A daemon thread serves delivery reports (``poll`` in short slices); the reports of each
slice reach the loop in one ``call_soon_threadsafe``, which resolves their futures.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from confluent_kafka import Message

from kheaders._client.chain import InterceptorChain
from kheaders._client.producer import Producer, sender_of
from kheaders._client.records import ProducerRecord, RecordMetadata
from kheaders._errors import ConfigurationError
from kheaders._log import get_logger
from kheaders._model.headers import HeaderTypes
from kheaders._model.limits import HeaderLimits
from kheaders.aio._closing import AsyncClosing
from kheaders.aio._delivery import Deliveries, Delivery, Metadata
from kheaders.aio._parking import LoopProducer, ParkingProducer
from kheaders.aio._threads import SLICE, Poller, Worker, wait_ended

_log = get_logger("kheaders.aio.producer")

YIELD_EVERY = 256
"""A task producing without ever waiting gives the loop a turn after this many records, so
other tasks (timers, consumers, servers) keep running while it produces millions."""
ROOM_RECHECK = 1.0
"""Seconds a producer waiting for queue room sleeps at most between its own checks (the wake
up normally comes sooner, from the delivery reports that free the room)."""


class AIOProducer(AsyncClosing):
    """kheaders' :class:`~kheaders.Producer` for asyncio: same config, interceptors,
    serializers and header limits; ``produce`` gives a future of the delivered message.

    Build it inside a running event loop. ``config`` takes the keys of ``kheaders.Producer``
    (``interceptor.classes``, serializers, ``kheaders.*``); a config ``on_delivery`` is
    refused (await the futures instead). librdkafka's other callbacks (``error_cb``,
    ``stats_cb``, ...) and interceptors' ``on_acknowledgement`` run on the delivery thread.

    Raises what ``kheaders.Producer`` raises for a bad config, ConfigurationError for a
    config ``on_delivery``, RuntimeError outside a running loop.
    """

    def __init__(
        self,
        config: Mapping[str, object],
        *,
        interceptors: Iterable[object] = (),
        key_serializer: object = None,
        value_serializer: object = None,
        strict: bool = False,
        limits: HeaderLimits | bool | None = None,
    ) -> None:
        if "on_delivery" in config:
            raise ConfigurationError(
                "on_delivery: the async producer reports each delivery through the future"
                " that produce() returns; await it instead"
            )
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._sync = LoopProducer(
            config,
            interceptors=interceptors,
            key_serializer=key_serializer,
            value_serializer=value_serializer,
            strict=strict,
            limits=limits,
        )
        raw = cast(ParkingProducer, self._sync.wrapped)
        self._raw = raw
        self._parked = raw.parked
        sender = sender_of(self._sync)
        self._send = sender.send
        self._send_record = sender.send_record
        # each record's future is its report, running the sync producer's reporter first
        self._deliveries = deliveries = Deliveries(loop, raw, sender.reporter)
        self._worker = Worker("kheaders-aio-producer", loop)
        self._poller = Poller("kheaders-aio-delivery", loop, self._sync.poll, deliveries.served)
        self._closing: asyncio.Task[int] | None = None
        self._turn = 0
        weakref.finalize(self, _stop_threads, self._poller, self._worker)

    # -- sending ----------------------------------------------------------------------------

    async def produce(  # noqa: PLR0917 - confluent's AIOProducer.produce order
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        timestamp: int = 0,
        headers: HeaderTypes = None,
    ) -> asyncio.Future[Message]:
        """Hand one record to librdkafka; return the future of its delivery.

        The future resolves to the delivered message (``headers()`` is the record's
        read-only Headers) or raises its delivery error (KafkaException). When librdkafka's
        queue is full this waits for room (never raising BufferError); cancelling that wait
        does not withdraw the record, which has already passed the interceptors.

        Raises as ``kheaders.Producer.produce`` (ReadOnlyHeadersError, TypeError,
        SerializationError, HeaderLimitError, KafkaException), except BufferError;
        RuntimeError once the producer is closing.
        """
        if self._closing is not None:
            raise RuntimeError("produce() on a closed AIOProducer")
        parked = self._parked
        if parked:
            await self._wait_room()
        fut = Delivery(self._deliveries)
        self._send(topic, value, key, headers, fut, partition=partition, timestamp=timestamp)
        if parked:
            await self._wait_room()
        else:
            self._turn += 1
            if self._turn >= YIELD_EVERY:
                self._turn = 0
                await asyncio.sleep(0)
        return fut

    async def send(self, record: ProducerRecord) -> RecordMetadata:
        """Send a :class:`ProducerRecord`; return its :class:`RecordMetadata` once delivered.

        Raises KafkaException when delivery fails, and what :meth:`produce` raises.
        """
        if self._closing is not None:
            raise RuntimeError("send() on a closed AIOProducer")
        parked = self._parked
        if parked:
            await self._wait_room()
        fut = Metadata(self._deliveries)
        self._send_record(record, fut)
        if parked:
            await self._wait_room()
        metadata: RecordMetadata = await fut
        return metadata

    async def _wait_room(self) -> None:
        """Until no record is parked: woken by the delivery reports that free room."""
        raw = self._raw
        room = self._deliveries.room
        while raw.parked:
            raw.unpark()
            if not raw.parked:
                break
            room.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(room.wait(), ROOM_RECHECK)

    # -- waiting ----------------------------------------------------------------------------

    def _flush_slice(self, timeout: float) -> int:
        try:
            return self._sync.flush(timeout)
        finally:
            self._deliveries.served()

    async def flush(self, timeout: float | None = None) -> int:
        """Wait until every record handed over is delivered or failed (``None`` or a negative
        ``timeout``: as long as that takes, bounded by ``message.timeout.ms``); return how
        many are still queued."""
        deadline = None if timeout is None or timeout < 0 else self._loop.time() + timeout
        while True:
            if deadline is None:
                await self._wait_room()
            else:
                self._raw.unpark()
            left = SLICE if deadline is None else max(0.0, min(SLICE, deadline - self._loop.time()))
            remaining = await self._worker.call(self._flush_slice, left) + len(self._raw.parked)
            if not remaining or (deadline is not None and self._loop.time() >= deadline):
                return remaining

    def __len__(self) -> int:
        """Records not yet delivered or failed (librdkafka's queue and those waiting for it)."""
        return len(self._sync) + len(self._raw.parked)

    # -- transactions -----------------------------------------------------------------------

    def _served_after(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        finally:
            self._deliveries.served()

    async def _tx(self, name: str, *args: Any) -> Any:
        await self._wait_room()  # parked records belong to the open transaction
        return await self._worker.call(self._served_after, getattr(self._sync, name), *args)

    async def init_transactions(self, timeout: float = -1) -> None:
        """confluent-kafka's ``init_transactions`` on the worker thread."""
        await self._tx("init_transactions", timeout)

    async def begin_transaction(self) -> None:
        """confluent-kafka's ``begin_transaction``."""
        await self._tx("begin_transaction")

    async def send_offsets_to_transaction(
        self, positions: list[Any], group_metadata: Any, timeout: float = -1
    ) -> None:
        """confluent-kafka's ``send_offsets_to_transaction`` on the worker thread."""
        await self._tx("send_offsets_to_transaction", positions, group_metadata, timeout)

    async def commit_transaction(self, timeout: float = -1) -> None:
        """confluent-kafka's ``commit_transaction`` (delivers every record first)."""
        await self._tx("commit_transaction", timeout)

    async def abort_transaction(self, timeout: float = -1) -> None:
        """confluent-kafka's ``abort_transaction``."""
        await self._tx("abort_transaction", timeout)

    async def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        """Cluster metadata (confluent-kafka's ``list_topics``) on the worker thread."""
        return await self._worker.call(self._sync.list_topics, topic, timeout)

    # -- the rest ---------------------------------------------------------------------------

    @property
    def interceptors(self) -> InterceptorChain:
        """The interceptor chain (``.errors`` counts failures per interceptor)."""
        return self._sync.interceptors

    @property
    def wrapped(self) -> Producer:
        """The kheaders Producer this one runs on (e.g. for a DeadLetterPublisher)."""
        return self._sync

    async def close(self, timeout: float | None = None) -> int:
        """Flush (up to ``timeout`` seconds, ``None``: bounded by ``message.timeout.ms``),
        then fail what is left (purged), stop the threads and close the interceptors.

        Returns what flush left queued, as librdkafka counts it: the records purged, plus
        any of librdkafka's own events (a broker's errors) not yet served. Idempotent: a
        second call (or one racing the first) waits for the same close and returns the same
        number. Cancelling the caller does not stop the close.
        """
        if self._closing is None:
            self._closing = self._loop.create_task(self._close(timeout))
        return await asyncio.shield(self._closing)

    async def _close(self, timeout: float | None) -> int:
        remaining = 0
        try:
            remaining = await self.flush(timeout)
        finally:
            self._raw.fail_parked()
            self._poller.stop()
            # librdkafka's handle must not be closed under a thread still polling it
            if await wait_ended(self._poller.ended, 10 * SLICE + 5):
                await self._worker.call(self._served_after, self._sync.close, 0)
            else:
                _log.warning("delivery thread did not stop; producer left open")
            self._deliveries.settle()
            self._worker.stop()
            await wait_ended(self._worker.ended, 10 * SLICE)
        return remaining

    def __repr__(self) -> str:
        state = "closed" if self._closing is not None else "open"
        n = len(self.interceptors.interceptors)
        return f"<kheaders.aio.AIOProducer {state}, {n} interceptors>"


def _stop_threads(poller: Poller, worker: Worker) -> None:
    """Finalizer of a producer collected without close(): its threads end (daemons anyway)."""
    poller.stop()
    worker.stop()
