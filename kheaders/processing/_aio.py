"""AIOProcessor: the asyncio driver of the processing engine, on AIOConsumer and AIOProducer,
with up to ``concurrency`` records handled at once and order kept per key."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Self, Unpack

from confluent_kafka import KafkaException, Message, TopicPartition

from kheaders._errors import DeserializationError, HeldFailuresError
from kheaders.aio._consumer import AIOConsumer
from kheaders.aio._producer import AIOProducer
from kheaders.processing import _steps as s
from kheaders.processing._base import (
    COMMITTED_TIMEOUT,
    ProcessorBase,
    now_ms,
    observed,
    partitions_of,
)
from kheaders.processing._delivery import RUNNING
from kheaders.processing._observe import log
from kheaders.processing._options import ProcessorOptions
from kheaders.processing._validate import number

AsyncHandler = Callable[[Message], Awaitable[object]]
LANE_DEPTH = 64
"""Records waiting per worker before the reader waits for room."""


class AIOProcessor(ProcessorBase):
    """:class:`kheaders.processing.Processor` for asyncio: ``await handler(msg)`` per record,
    ``await run()``, ``stop()`` from any thread (or SIGTERM/SIGINT in the main thread).

    ``concurrency`` records are handled at once (default 1: one after the other, in
    partition order). Above 1, ``concurrency`` workers each take the records of the keys that
    hash to it, in order, so records of the same key are still handled one after the other
    (records without a key go to any worker, and a slow record holds up the keys behind it
    in its worker); a partition's offset is committed only up to its oldest record still in
    hand, and the records handled after it are named in the commit's metadata, so a restart
    skips them. ``stop()`` starts no record after it (queued ones are left for the next
    run). Every other option is the sync Processor's, and so is every decision (one engine).
    Raises ConfigurationError for a bad option or setting.
    """

    def __init__(
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: AsyncHandler | None = None,
        *,
        concurrency: int = 1,
        **options: Unpack[ProcessorOptions],
    ) -> None:
        number("concurrency", concurrency, integer=True)
        super().__init__(config, topics, handler, options)
        self.concurrency = concurrency
        self._engine.concurrent = concurrency > 1
        self._engine.read_ahead = True  # AIOConsumer reads ahead (see Pause below)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._consumer: AIOConsumer | None = None
        self._producer: AIOProducer | None = None
        self._lanes: list[deque[s.HandleEach | s.Handle]] = []
        """With ``concurrency`` above 1: runs waiting per worker (a record goes to its key's),
        and how many records each lane holds."""
        self._queued: list[int] = []
        self._fed = self._room = asyncio.Event()
        """Set when records were added to the lanes (and when a worker emptied its lane: the
        reader may go on)."""
        self._workers: list[asyncio.Task[None]] = []
        self._woken: asyncio.Event | None = None
        """Set on the loop by ``stop()``: in-place waits end at once."""

    def stop(self) -> None:
        """Ask ``run()`` to finish the records in hand, commit and return (any thread): no
        record is started after this, and in-place retry waits end (their records are
        handled again by the next run)."""
        super().stop()
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed: nothing waits on it
                loop.call_soon_threadsafe(woken.set)
                loop.call_soon_threadsafe(self._room.set)  # (the reader waiting for room)

    async def aclose(self, timeout: float | None = None) -> None:
        """:meth:`close` from a coroutine: the loop goes on (and a run on it finishes) while
        ``close()`` waits in a thread."""
        await asyncio.to_thread(self.close, timeout)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose(self.shutdown_timeout)

    async def run(self) -> None:
        """Process until stopped; commit what was handled; close the clients.

        Raises as :meth:`kheaders.processing.Processor.run` does.
        """
        with self._running():
            running = RUNNING.set(self)  # (this task's context: workers copy it)
            try:
                await self._run_all()
            finally:
                RUNNING.reset(running)
            if self._error is not None:
                raise self._error

    async def _run_all(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._woken = asyncio.Event()
        if self._stop.is_set():
            self._woken.set()
        await asyncio.to_thread(self._prepare_topics)
        producer = self._producer = AIOProducer(self._producer_config)
        consumer = self._consumer = AIOConsumer(self._consumer_config)
        if self.concurrency > 1:
            self._lanes = [deque() for _ in range(self.concurrency)]
            self._queued = [0] * self.concurrency
            self._fed, self._room = asyncio.Event(), asyncio.Event()
            self._workers = [asyncio.create_task(self._lane(i)) for i in range(self.concurrency)]
        try:
            await consumer.subscribe(
                self._core.all_topics(),
                on_assign=self._on_assign,
                on_revoke=self._on_revoke,
                on_lost=self._on_lost,
            )
            await self._read(consumer)
        finally:
            await self._shutdown(consumer, producer)

    async def _read(self, consumer: AIOConsumer) -> None:
        engine, carry = self._engine, self._carry
        while not self._stop.is_set():
            try:
                msgs = await consumer.consume(
                    self.batch_size, engine.wait(self.poll_timeout, now_ms())
                )
            except DeserializationError as exc:  # unreadable headers: never retried
                await carry(engine.send(s.Unreadable(exc, now_ms())))
                continue
            now = now_ms()  # committed after a read, as the sync driver does
            await carry(engine.send(s.Tick(now)))
            if msgs:
                await carry(engine.send(s.Polled(msgs, now)))

    async def _carry(self, steps: list[s.Step], lanes: bool = True) -> None:
        """Carry out the engine's steps in order (records to the lanes, if any, when ``lanes``)."""
        for step in steps:
            match step:
                case s.HandleEach() | s.Handle() if lanes and self._lanes:
                    await self._to_lanes(step)
                case s.HandleEach():
                    await self._each(step)
                case s.Handle():
                    await self._handle(step)
                case s.Publish():
                    await self._publish(step)
                case s.Commit():
                    await self._commit(step)
                case s.Pause(partition=tp):
                    assert self._consumer is not None
                    await self._consumer.pause([tp])
                    # librdkafka's own seek: records read ahead stay (other partitions'
                    # are good; the engine drops this one's until the one sought back to)
                    await asyncio.to_thread(self._consumer.wrapped.seek, tp)
                case s.Resume(partitions=tps):
                    assert self._consumer is not None
                    await self._consumer.resume(tps)
                case s.Purge():
                    assert self._producer is not None
                    self._producer.wrapped.purge()
                    await self._producer.flush(0)
                case s.Stop():
                    self._stopped(step)

    async def _handle(self, step: s.Handle) -> None:
        engine = self._engine
        if engine.stopping or (step.delay and await self._stopped_within(step.delay)):
            return  # stopped (between in-place attempts): left for the next run
        msg = step.record
        try:
            with observed(self._observer, step):
                await step.handler(msg)
        except Exception as exc:
            await self._carry(engine.send(s.Failed(step, exc, now_ms())), False)
        else:
            engine.send(s.Handled((msg,)))

    async def _each(self, step: s.HandleEach) -> None:
        """A run: the handler on each record in order; one report for the records handled."""
        engine, handler, records = self._engine, step.handler, step.records
        start = 0
        for msg in records:
            if engine.stopping:  # a stopped processor starts nothing: read again next run
                records = records[: records.index(msg, start)]
                break
            try:
                await handler(msg)
            except Exception as exc:
                i = records.index(msg, start)
                if i > start:  # the records before it first
                    engine.send(s.Handled(records[start:i]))
                start = i + 1
                await self._carry(engine.send(s.Failed(step.one(msg), exc, now_ms())), False)
        if start < len(records):
            engine.send(s.Handled(records[start:] if start else records))

    async def _to_lanes(self, step: s.HandleEach | s.Handle) -> None:
        """Each record to its key's lane (no key: by offset), a run per lane; then wait while
        a lane holds more than LANE_DEPTH records."""
        lanes, queued, n = self._lanes, self._queued, len(self._lanes)
        if isinstance(step, s.Handle):
            key = step.record.key()
            i = (hash(key) if key is not None else step.record.offset() or 0) % n
            lanes[i].append(step)
            queued[i] += 1
        else:
            raws = step.raws
            runs = [
                s.HandleEach([], step.handler, step.attempt, [] if raws else None) for _ in lanes
            ]
            for j, msg in enumerate(step.records):
                key = msg.key()
                run = runs[(hash(key) if key is not None else msg.offset() or 0) % n]
                run.records.append(msg)
                if raws:
                    run.raws.append(raws[j])  # type: ignore[union-attr]
            for i, run in enumerate(runs):
                if run.records:
                    lanes[i].append(run)
                    queued[i] += len(run.records)
        self._fed.set()
        room = self._room
        while any(q > LANE_DEPTH for q in queued) and not self._engine.stopping:
            room.clear()
            await room.wait()

    async def _lane(self, i: int) -> None:
        """One of ``concurrency`` workers: the runs of the keys hashed to it, in order. Once
        stopped it starts none: the runs left stay in hand (never committed past), dropped."""
        lane, queued, fed, room = self._lanes[i], self._queued, self._fed, self._room
        while self._lanes:  # (emptied at shutdown)
            if lane and not self._engine.stopping:
                step = lane.popleft()
                if isinstance(step, s.HandleEach):
                    await self._each(step)
                else:
                    await self._handle(step)
                queued[i] -= len(step.records) if isinstance(step, s.HandleEach) else 1
            else:
                lane.clear()
                queued[i] = 0
                fed.clear()
                await fed.wait()
            room.set()

    async def _stopped_within(self, delay: float) -> bool:
        """Wait ``delay`` seconds unless ``stop()`` comes first; whether it came."""
        if self._woken is not None and not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._woken.wait(), delay)
        return self._stop.is_set()

    async def _publish(self, step: s.Publish) -> None:
        engine, producer = self._engine, self._producer
        assert producer is not None
        try:
            delivery = await producer.produce(
                step.topic,
                value=step.value,
                key=step.key,
                partition=step.partition,
                timestamp=step.timestamp,
                headers=step.headers,
            )
        except Exception as exc:  # refused before sending (a header limit, a size)
            why = f"{type(exc).__name__}: {exc}"
            await self._carry(engine.send(s.Acknowledged(step, why, now_ms())))
            return

        def reported(future: asyncio.Future[Message]) -> None:
            error = "cancelled" if future.cancelled() else future.exception()
            outcome = None if error is None else str(error)
            if engine.send(s.Acknowledged(step, outcome, now_ms())):  # (it answers none now)
                raise AssertionError("an acknowledgement's steps would be lost")

        delivery.add_done_callback(reported)

    async def _commit(self, step: s.Commit) -> None:
        assert self._consumer is not None
        try:
            await self._consumer.commit(offsets=step.offsets, asynchronous=not step.sync)
        except KafkaException as exc:
            log.warning("processing.commit_failed", error=str(exc))
            return
        self._engine.send(s.Committed(step.offsets))

    async def _on_assign(self, consumer: AIOConsumer, partitions: list[TopicPartition]) -> None:
        try:
            committed = await consumer.committed(partitions, timeout=COMMITTED_TIMEOUT)
        except KafkaException as exc:  # nothing skipped: handled again, at least once
            log.warning("processing.committed_unknown", error=str(exc))
            return
        self._engine.send(s.Assigned(committed))

    async def _on_revoke(self, _consumer: AIOConsumer, partitions: list[TopicPartition]) -> None:
        if self._producer is not None:
            await self._producer.flush(min(self.shutdown_timeout, 5.0))
        await self._carry(self._engine.send(s.Revoked(partitions_of(partitions))))

    async def _on_lost(self, _consumer: AIOConsumer, partitions: list[TopicPartition]) -> None:
        self._engine.send(s.Lost(partitions_of(partitions)))

    async def _shutdown(self, consumer: AIOConsumer, producer: AIOProducer) -> None:
        if self._workers:  # the records in hand are finished; the queued ones start no more
            self._lanes = []  # (what is left in them stays in hand)
            self._fed.set()
            _, late = await asyncio.wait(self._workers, timeout=self.shutdown_timeout)
            for worker in late:  # a handler past shutdown_timeout: its record stays open
                worker.cancel()
            if late:
                log.warning("processing.handlers_cancelled_at_stop", records=len(late))
                await asyncio.wait(late)
        left = await producer.flush(self.shutdown_timeout)
        await self._carry(self._engine.send(s.Closing(left, now_ms())))
        try:
            await consumer.close()
        except HeldFailuresError as exc:  # not committed: read again by the next run
            log.warning("processing.failures_left_at_close", records=len(exc.exceptions))
        await producer.close(0 if left else self.shutdown_timeout)
