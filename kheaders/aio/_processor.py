"""AIOProcessor: the asyncio twin of kheaders.processing.Processor, on AIOConsumer and
AIOProducer, with up to ``concurrency`` records handled at once and order kept per key."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from confluent_kafka import KafkaException, Message, TopicPartition

from kheaders._errors import DeserializationError, HeldFailuresError
from kheaders.aio._consumer import AIOConsumer
from kheaders.aio._producer import AIOProducer
from kheaders.processing._base import (
    COMMITTED_TIMEOUT,
    Abandoned,
    Partition,
    ProcessorBase,
    stop_on_signals,
)
from kheaders.processing._core import Hop
from kheaders.processing._delivery import RUNNING
from kheaders.processing._observe import log
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
    run). Every other option is the sync Processor's. Raises ConfigurationError for a bad
    option or setting.
    """

    def __init__(
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: AsyncHandler | None = None,
        *,
        concurrency: int = 1,
        **options: Any,
    ) -> None:
        number("concurrency", concurrency, integer=True)
        super().__init__(config, topics, handler, **options)
        self.concurrency = concurrency
        self._loop: asyncio.AbstractEventLoop | None = None
        self._consumer: AIOConsumer | None = None
        self._producer: AIOProducer | None = None
        self._held: dict[Partition, deque[Message]] = {}
        """Records of paused partitions read before the pause took effect, in order."""
        self._lanes: list[asyncio.Queue[tuple[Message, int | None] | None]] = []
        """With ``concurrency`` above 1: a queue per worker; a record goes to its key's."""
        self._workers: list[asyncio.Task[None]] = []
        self._error: BaseException | None = None
        """What a concurrent record raised that stops the processor (ProcessingError)."""
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

    async def run(self) -> None:
        """Process until stopped; commit what was handled; close the clients.

        Raises ProcessingError for a failure with nowhere to go or a handler slower than
        ``max.poll.interval.ms``; KafkaException when the cluster cannot be reached at start.
        """
        running = RUNNING.set(self)  # (this task's context: workers copy it)
        try:
            await self._run_all()
        finally:
            RUNNING.reset(running)

    async def _run_all(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._woken = asyncio.Event()
        if self._stopping:
            self._woken.set()
        await asyncio.to_thread(self._prepare_topics)
        producer = self._producer = AIOProducer(self._producer_config)
        consumer = self._consumer = AIOConsumer(self._consumer_config)
        if self.concurrency > 1:
            self._lanes = [asyncio.Queue(LANE_DEPTH) for _ in range(self.concurrency)]
            self._workers = [asyncio.create_task(self._lane(q)) for q in self._lanes]
        try:
            await consumer.subscribe(
                self._core.all_topics(),
                on_assign=self._on_assign,
                on_revoke=self._on_revoke,
                on_lost=self._on_lost,
            )
            with stop_on_signals(self.stop, self.handle_signals):
                await self._run(consumer)
        finally:
            await self._shutdown(consumer, producer)

    async def _run(self, consumer: AIOConsumer) -> None:
        last_commit = time.monotonic()
        while not self._stop.is_set():
            for msg, attempt in self._due_again():
                await self._dispatch(msg, attempt)
            if self._paused:
                for tp in self._paused.due():
                    await self._resume(consumer, tp)
            wait = self._paused.wait(self.poll_timeout)
            if self._again:
                wait = min(wait, 0.1)
            try:
                msgs = await consumer.consume(self.batch_size, wait)
            except DeserializationError as exc:  # unreadable headers: never retried
                await self._failed(exc.message, exc, 1, (exc.message.key(), exc.message.value()))
                continue
            if time.monotonic() - last_commit >= self.commit_interval:  # after a read, as
                await self._commit(consumer, asynchronous=True)  # the sync processor does
                last_commit = time.monotonic()
            if msgs:
                self._observer.refresh()
                await self._batch(msgs)

    async def _batch(self, msgs: list[Message]) -> None:
        held = self._held
        core = self._core
        fast = (
            core.plain
            and not self._observer.active
            and self.concurrency == 1
            and not self._offsets.restoring
        )
        retry_topics = core.retry_topics
        handler = core.handler
        settled = self._offsets.settled_now
        last: dict[tuple[str, int], int] = {}  # as the sync processor's short way
        try:
            for msg in msgs:
                if self._stopping:
                    return
                if msg.error() is not None:
                    self._event(msg)
                    continue
                topic = msg.topic()
                if fast and topic not in retry_topics:
                    try:
                        await handler(msg)  # type: ignore[misc]
                    except Exception as exc:
                        tp = (topic, msg.partition())
                        if tp in last:  # the records before it first
                            settled(tp, last.pop(tp))
                        await self._failed(msg, exc, 1, (msg.key(), msg.value()))
                    else:
                        last[(topic, msg.partition())] = msg.offset()  # type: ignore[index,assignment]
                    continue
                tp = (topic or "", msg.partition() or 0)
                if tp in held:
                    held[tp].append(msg)  # its partition waits for a due time: in order
                    continue
                await self._dispatch(msg)
        finally:
            for where, offset in last.items():
                settled(where, offset)

    async def _resume(self, consumer: AIOConsumer, tp: TopicPartition) -> None:
        where = (tp.topic, tp.partition)
        waiting = self._held.pop(where, deque())
        await consumer.resume([tp])
        while waiting:
            await self._dispatch(waiting.popleft())
            if where in self._held:  # paused again: the rest waits behind it
                self._held[where].extend(waiting)
                return

    async def _dispatch(self, msg: Message, attempt: int | None = None) -> None:
        if self._stopping:
            return  # a stopped processor starts nothing: read again by the next run
        core = self._core
        topic, partition, offset = msg.topic() or "", msg.partition() or 0, msg.offset() or 0
        tp = (topic, partition)
        if self._done_before(tp, offset):
            return
        due = core.due_ms(msg)
        if due is not None:
            consumer = self._consumer
            assert consumer is not None
            self._paused.hold(tp, offset, due)
            self._held[tp] = deque([msg])
            await consumer.pause([TopicPartition(topic, partition)])
            log.debug("processing.paused", topic=topic, partition=partition, offset=offset)
            return
        if not core.accepts(msg):
            self._offsets.settled_now(tp, offset)
            return
        if self.concurrency == 1:
            await self._process(msg, attempt, started=False)
            return
        lanes = self._lanes
        key = msg.key()
        lane = lanes[(hash(key) if key is not None else offset) % len(lanes)]
        self._offsets.start(tp, offset)
        await lane.put((msg, attempt))

    async def _lane(self, queue: asyncio.Queue[tuple[Message, int | None] | None]) -> None:
        """One of ``concurrency`` workers: records of the keys hashed to it, in order. Once
        stopped it starts none: the records still queued stay open (never committed past)
        and are taken off the queue so the reader never waits for room."""
        while (item := await queue.get()) is not None:
            if self._stopping:
                queue.task_done()
                continue
            try:
                await self._process(item[0], item[1], started=True)
            except Exception as exc:  # a ProcessingError: nowhere to send a failure
                self._error = self._error or exc
                self.stop()
            finally:
                queue.task_done()
        queue.task_done()

    async def _process(self, msg: Message, attempt: int | None, *, started: bool) -> None:
        core = self._core
        topic, partition, offset = msg.topic() or "", msg.partition() or 0, msg.offset() or 0
        if attempt is None:
            attempt = core.attempt(msg)
        handler = core.handler_for(msg)
        raw = (msg.key(), msg.value())  # the consumed bytes, republished on failure
        observer = self._observer
        try:
            if handler is None:
                raise self._no_handler(topic, partition, offset)
            core.deserialize(msg)
            if observer.active:
                with observer.processing(topic, partition, offset, attempt, msg.headers()):  # type: ignore[arg-type]
                    await self._call(handler, msg)
            else:
                await self._call(handler, msg)
        except Abandoned:
            return  # stopped between in-place attempts: neither settled nor republished
        except Exception as exc:
            await self._failed(msg, exc, attempt, raw, started=started)
            return
        if started:
            self._offsets.settle((topic, partition), offset)
        else:
            self._offsets.settled_now((topic, partition), offset)

    async def _call(self, handler: Callable[[Message], Any], msg: Message) -> None:
        retry = self._core.retry
        quick = retry.in_place if retry is not None else 0
        if not quick:
            await handler(msg)
            return
        try:
            for left in range(quick, -1, -1):
                self._tries[id(msg)] = quick - left
                try:
                    await handler(msg)
                    return
                except Exception as exc:
                    delay = self._in_place_delay(msg, exc, left)
                    if await self._stopped_within(delay):
                        raise Abandoned from exc
        finally:
            self._tries.pop(id(msg), None)

    async def _stopped_within(self, delay: float) -> bool:
        """Wait ``delay`` seconds unless ``stop()`` comes first; whether it came."""
        woken = self._woken
        if woken is None or self._stopping or not delay:
            return self._stopping
        try:
            await asyncio.wait_for(woken.wait(), delay)
        except TimeoutError:
            return self._stopping
        return True

    async def _failed(
        self,
        msg: Message,
        error: BaseException,
        attempt: int,
        raw: tuple[object, object],
        *,
        started: bool = False,
    ) -> None:
        hop = self._failure_hop(msg, error, attempt)
        tp = (msg.topic() or "", msg.partition() or 0)
        offset = msg.offset() or 0
        if not started:
            self._offsets.start(tp, offset)
        producer = self._producer
        assert producer is not None
        try:
            delivery = await producer.produce(
                hop.topic,
                value=raw[1],
                key=raw[0],
                partition=hop.partition,
                timestamp=self._timestamp_for(msg),
                headers=hop.headers,
            )
        except Exception as exc:  # refused before sending (a header limit, a size):
            self._publish_failed(hop, tp, offset, f"{type(exc).__name__}: {exc}")
            self._handle_again_later(msg, raw, attempt)  # never committed meanwhile
            return
        delivery.add_done_callback(lambda f: self._reported(f, hop, msg, raw, attempt))

    def _reported(
        self,
        future: asyncio.Future[Message],
        hop: Hop,
        msg: Message,
        raw: tuple[object, object],
        attempt: int,
    ) -> None:
        tp = (msg.topic() or "", msg.partition() or 0)
        offset = msg.offset() or 0
        error = None if future.cancelled() else future.exception()
        if error is None and not future.cancelled():
            self._published(hop, tp, offset, tp[0])
            return
        self._publish_failed(hop, tp, offset, str(error or "cancelled"))
        self._handle_again_later(msg, raw, attempt)

    # -- commits, rebalances, shutdown -------------------------------------------------------

    async def _commit(
        self, consumer: AIOConsumer, *, asynchronous: bool, only: set[Partition] | None = None
    ) -> None:
        offsets = self._offsets.to_commit(only)
        if not offsets:
            return  # nothing new: never a commit that fails for having nothing to store
        try:
            await consumer.commit(offsets=offsets, asynchronous=asynchronous)
        except KafkaException as exc:
            log.warning("processing.commit_failed", error=str(exc))
            return
        self._offsets.committed(offsets)

    async def _on_assign(self, consumer: AIOConsumer, partitions: list[TopicPartition]) -> None:
        try:
            self._restore(await consumer.committed(partitions, timeout=COMMITTED_TIMEOUT))
        except KafkaException as exc:  # nothing skipped: handled again, at least once
            log.warning("processing.committed_unknown", error=str(exc))

    async def _on_revoke(self, consumer: AIOConsumer, partitions: list[TopicPartition]) -> None:
        revoked = {(tp.topic, tp.partition) for tp in partitions}
        if self._producer is not None:
            await self._producer.flush(min(self.shutdown_timeout, 5.0))
        await self._commit(consumer, asynchronous=False, only=revoked)
        self._forget(revoked)
        for tp in revoked:
            self._held.pop(tp, None)

    async def _on_lost(self, _consumer: AIOConsumer, partitions: list[TopicPartition]) -> None:
        lost = {(tp.topic, tp.partition) for tp in partitions}
        self._forget(lost)
        for tp in lost:
            self._held.pop(tp, None)

    async def _shutdown(self, consumer: AIOConsumer, producer: AIOProducer) -> None:
        if self._workers:  # the records in hand are finished; the queued ones start no more
            for queue in self._lanes:
                while not queue.empty():
                    queue.get_nowait()
                    queue.task_done()
                queue.put_nowait(None)
            _, late = await asyncio.wait(self._workers, timeout=self.shutdown_timeout)
            for worker in late:  # a handler past shutdown_timeout: its record stays open
                worker.cancel()
            if late:
                log.warning("processing.handlers_cancelled_at_stop", records=len(late))
                await asyncio.wait(late)
        left = await producer.flush(self.shutdown_timeout)
        if left:  # unacknowledged: their records stay uncommitted and are read again
            log.warning("processing.unpublished_at_stop", records=left)
            producer.wrapped.purge()  # as the sync processor: nothing goes out after this
            await producer.flush(0)
        await self._commit(consumer, asynchronous=False)
        try:
            await consumer.close()
        except HeldFailuresError as exc:  # not committed: read again by the next run
            log.warning("processing.failures_left_at_close", records=len(exc.exceptions))
        await producer.close(0 if left else self.shutdown_timeout)
        if self._error is not None:
            raise self._error
