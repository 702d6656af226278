"""AIOConsumer: kheaders' Consumer for asyncio; every wait on librdkafka runs off the loop.

Records librdkafka already holds are read on the loop thread, in the calling task (a read
with a zero timeout never waits on the network, and no thread handoff or GIL ping-pong is
paid for them), when nothing that read could serve needs another thread (see
:func:`_loop_reads_allowed`). A read that has to wait goes to one daemon worker thread per
consumer, which runs the kheaders Consumer's calls in order (its deserializers and
interceptors included) in slices of at most ``SLICE`` seconds, so a cancelled
``await poll(10)`` raises CancelledError at once and its slice ends shortly after. What a
cancelled slice still returns is kept, in order, for the next read: never lost; a cancelled
read that has not started is dropped, and a read ends its wait as soon as any read landed
records. confluent-kafka lets one thread at a time into a client (a call from a second
thread sleeps until none is in, however long the first keeps calling): so nothing runs on the
loop thread while the worker may be inside librdkafka (see :meth:`AIOConsumer._store_handed`).

Records reach the application through ``poll``, ``consume`` and ``async for``; the last
reads ahead in batches. So that read-ahead never counts as consumed, the consumer stores a
record's offset when it reaches the application (``enable.auto.offset.store``, when left on,
is done here instead of in librdkafka, which would store it when it was read ahead).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import queue
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Self

from confluent_kafka import KafkaException, Message, TopicPartition

from kheaders._client.chain import InterceptorChain
from kheaders._client.consumer import Consumer, kept_back
from kheaders._errors import DeserializationError
from kheaders._log import get_logger
from kheaders._settings import config_bool
from kheaders.aio._closing import AsyncClosing
from kheaders.aio._loopreads import FORWARDED, TURN_AFTER, forwarding, loop_reads_allowed
from kheaders.aio._threads import SLICE, Worker, wait_ended

_log = get_logger("kheaders.aio.consumer")

Item = Message | BaseException
"""A record (or error event) read, or the exception a read raised, in reading order."""

ITER_BATCH = 500
"""Records ``async for`` reads ahead in one read."""
CLOSE_TIMEOUT = 30.0
"""Seconds ``close()`` waits for librdkafka to leave the group before giving up on it."""

_clock = time.monotonic
"""For the loop's turns: a C call per record in ``async for`` (``loop.time()`` is a Python
method, several times the cost)."""
_STORE = "enable.auto.offset.store"
_REBALANCE_CALLBACKS = ("on_assign", "on_revoke", "on_lost")


def _insert_in_order(items: list[Item], failure: DeserializationError) -> None:
    """Put ``failure`` before the first record read after it from the same partition.

    The sync consumer's ``consume`` returns a batch's good records and raises its failures
    afterwards; the async consumer hands records over one by one, so it restores the order.
    """
    msg = failure.message
    where = (msg.topic(), msg.partition())
    offset = msg.offset() or 0
    for i, item in enumerate(items):
        if (
            isinstance(item, Message)
            and item.error() is None
            and (item.topic(), item.partition()) == where
            and (item.offset() or 0) > offset
        ):
            items.insert(i, failure)
            return
    items.append(failure)


class AIOConsumer(AsyncClosing):
    """kheaders' :class:`~kheaders.Consumer` for asyncio: the same record semantics.

    Records have read-only Headers (never ``None``), deserialized key and value (the
    deserializers see topic and headers); a record that fails to deserialize raises
    DeserializationError carrying the raw record, after the consumer moved past it only.
    ``on_consume``/``on_commit`` run as in the sync consumer, on the worker thread. Build it
    inside a running event loop; ``config`` as for ``kheaders.Consumer``.

    Rebalance callbacks given to :meth:`subscribe` get this consumer first; they may be
    coroutine functions (run on the loop while the worker thread, inside librdkafka's
    callback, runs the consumer's methods they await) or plain functions (run on the worker
    thread).
    """

    def __init__(
        self,
        config: Mapping[str, object],
        *,
        interceptors: Iterable[object] = (),
        key_deserializer: object = None,
        value_deserializer: object = None,
        strict: bool = False,
    ) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        conf = dict(config)
        self._store = config_bool(conf.get(_STORE, True), _STORE)
        conf[_STORE] = False  # stored here (if at all), when a record reaches the application
        self._worker = Worker("kheaders-aio-consumer", loop)
        for name in FORWARDED:  # served by a read on the loop thread: run on the worker
            if conf.get(name) is not None:
                conf[name] = forwarding(conf[name], self._forward)  # type: ignore[arg-type]
        self._sync = Consumer(
            conf,
            interceptors=interceptors,
            key_deserializer=key_deserializer,
            value_deserializer=value_deserializer,
            strict=strict,
        )
        self._ahead: deque[Item] = deque()
        self._bad = 0  # failures (exceptions) among the items of _ahead
        self._prefetch: concurrent.futures.Future[tuple[list[Item], int]] | None = None
        self._prefetched: asyncio.Future[None] | None = None  # lands the prefetch
        self._reading = 0  # worker reads submitted whose items have not landed yet
        self._busy = 0  # consumer calls submitted to the worker and not yet seen done here
        self._waiters: list[asyncio.Future[None]] = []  # reads waiting for a landing
        self._generation = 0  # bumped by seek and close: reads in flight then land nothing
        self._loop_reads = loop_reads_allowed(conf, self._sync)
        self._rebalancing = False  # rebalance callbacks given to subscribe
        self._turned = _clock()  # when a read last let the loop have a turn
        self._unstored: list[Message] = []  # handed to the application, offsets not stored
        self._storing = False  # _store_handed is scheduled
        # partitions assigned, when only assign() can change them (None: ask librdkafka)
        self._assigned: int | None = None
        self._subscribed = False  # then rebalances change them: always ask
        self._closed = False
        self._closing: asyncio.Task[None] | None = None
        # set while a coroutine rebalance callback runs: the worker takes consumer calls here
        self._nested: queue.SimpleQueue[Any] | None = None

    # -- reading ----------------------------------------------------------------------------

    def _forward(self, callback: Callable[..., object], *args: object) -> None:
        """A config callback a read on the loop thread served: run on the worker, after its
        current job; what it raises is raised by a later read (as confluent-kafka raises it
        from the read that served it)."""
        cf = self._worker.submit(callback, *args)
        loop = self._loop

        def done(cf: concurrent.futures.Future[object]) -> None:
            exc = cf.exception()
            if exc is not None:
                with contextlib.suppress(RuntimeError):  # the loop is closed
                    loop.call_soon_threadsafe(self._raise_later, exc)

        cf.add_done_callback(done)

    def _raise_later(self, exc: BaseException) -> None:
        self._ahead.append(exc)
        self._bad += 1
        self._wake()

    def _fetch(self, num: int, timeout: float) -> tuple[list[Item], int]:
        """One bounded read, in reading order; failures become items. On the worker thread,
        or (``timeout`` 0) on the loop thread.

        Returns as soon as some records are there: a batch waits for its first record only.
        Returns the items and how many of them are failures.
        """
        sync = self._sync
        if num == 1:
            try:
                msg = sync.poll(timeout)
            except DeserializationError as exc:
                return [exc], 1
            return ([] if msg is None else [msg]), 0
        items: list[Item] = []
        failures: list[DeserializationError] = []
        try:
            if timeout:  # librdkafka's consume() waits for all num: wait for one, then take
                items.extend(sync.consume(1, timeout))
                if items:
                    items.extend(sync.consume(num - 1, 0))
            else:
                items.extend(sync.consume(num, 0))
        except DeserializationError as exc:
            failures.append(exc)
        while kept_back(sync):  # what the batch kept back is raised first, one per call
            try:
                sync.consume(1, 0)
            except DeserializationError as exc:
                failures.append(exc)
        for failure in failures:
            _insert_in_order(items, failure)
        return items, len(failures)

    def _land(
        self,
        cf: concurrent.futures.Future[tuple[list[Item], int]],
        generation: int,
        landed: asyncio.Future[None],
    ) -> None:
        """On the loop: a worker read's items join the read-ahead queue, in reading order
        (the worker's reads end, and land, in the order they were submitted), whether or
        not their caller still waits: a cancelled read loses nothing."""
        self._reading -= 1
        self._busy -= 1
        if generation == self._generation and not cf.cancelled():
            exc = cf.exception()
            if exc is not None:
                self._ahead.append(exc)
                self._bad += 1
            else:
                items, bad = cf.result()
                self._ahead.extend(items)
                self._bad += bad
        if not landed.done():
            landed.set_result(None)
        self._wake()

    def _submit(
        self, num: int, timeout: float
    ) -> tuple[concurrent.futures.Future[tuple[list[Item], int]], asyncio.Future[None]]:
        """A read on the worker thread; the asyncio future resolves once its items landed."""
        loop = self._loop
        landed: asyncio.Future[None] = loop.create_future()
        generation = self._generation
        cf = self._worker.submit(self._fetch, num, timeout)
        self._reading += 1
        self._busy += 1

        def done(cf: concurrent.futures.Future[tuple[list[Item], int]]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody reads
                loop.call_soon_threadsafe(self._land, cf, generation, landed)

        cf.add_done_callback(done)
        return cf, landed

    async def _read(self, num: int, timeout: float) -> None:
        """One slice read on the worker (or the prefetched one); its items land in order.

        Returns once it landed, or earlier once items of an earlier read landed (a cancelled
        caller's: its read still lands, see ``_land``). A cancelled caller's read that has
        not started yet is dropped: it would hold the worker for a slice, for nobody.
        """
        cf = self._prefetch
        landed = self._prefetched
        self._prefetch = self._prefetched = None
        if landed is None:
            cf, landed = self._submit(num, timeout)
        try:
            while not landed.done() and not self._ahead:
                waiter = self._loop.create_future()
                self._waiters.append(waiter)
                await waiter
        except asyncio.CancelledError:
            if cf is not None:
                cf.cancel()  # not started: never runs, lands nothing; else it lands
            raise
        finally:
            self._turned = _clock()

    def _wake(self) -> None:
        """Wake the reads waiting: something landed."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _read_here(self, num: int) -> None:
        """Read what librdkafka already holds, on the loop thread, in a copy of the calling
        task's context (as the worker runs its jobs). Never waits."""
        try:
            items, bad = contextvars.copy_context().run(self._fetch, num, 0)
        except Exception as exc:  # e.g. a fatal KafkaException: raised in order
            items, bad = [exc], 1
        self._ahead.extend(items)
        self._bad += bad

    @property
    def _reads_here(self) -> bool:
        """Whether reads may run on the loop thread (else the worker reads ahead)."""
        return self._loop_reads and not self._rebalancing

    def _may_read_here(self) -> bool:
        """A read on the loop thread, now: allowed, and nothing read ahead or in flight."""
        return self._reads_here and not self._busy and not self._ahead and not self._closed

    async def _read_ready(self, num: int) -> None:
        """Read held records on the loop thread, after giving the loop a turn when it had
        none for ``TURN_AFTER`` seconds."""
        now = _clock()
        if now - self._turned >= TURN_AFTER:
            await asyncio.sleep(0)
            self._turned = now
            if not self._may_read_here():  # closed, or another task read meanwhile
                return
        self._read_here(num)

    def _prefetch_next(self, num: int) -> None:
        """Have the worker read the next batch while the application handles this one
        (when reads on the loop thread are not allowed: they need no prefetch)."""
        if self._prefetch is None and not self._ahead and not self._closed:
            self._prefetch, self._prefetched = self._submit(num, SLICE)

    def _handed(self, msgs: list[Message]) -> None:
        """Records the application now has: a batch's offsets are stored at once; a single
        record's before the loop's next turn (and before any other consumer call), so that
        ``async for`` and ``poll`` pay one store per turn, not one per record."""
        if not self._store or not msgs:
            return
        if len(msgs) > 1:
            self._unstored.extend(msgs)  # after the single records handed before them
            self._store_handed()
            return
        self._unstored.append(msgs[0])
        if not self._storing:
            self._storing = True
            self._loop.call_soon(self._store_handed)

    def _store_handed(self) -> None:
        """Store the offsets of the records handed to the application (see the module doc).

        On the loop thread when no consumer call of the worker's can be inside librdkafka;
        else as a worker job, after those calls: confluent-kafka lets one thread at a time
        into a client, and a second thread's call waits (sleeping, polling) until none is in,
        which can starve the loop for as long as the worker has reads queued back to back.
        """
        self._storing = False
        msgs = self._unstored
        if not msgs:
            return
        self._unstored = []
        if self._busy and self._nested is None:
            # (in a coroutine rebalance callback the worker waits inside librdkafka's callback,
            # where a call from another thread is let in: stored here, before the callback's
            # own calls, as before)
            self._track(self._worker.submit(self._store_last, msgs))
        else:
            self._store_last(msgs)

    def _store_last(self, msgs: list[Message]) -> None:
        """Store the offset after the last of ``msgs`` in each partition.

        They are in order per partition, so the last record of each partition is found
        from the end, stopping once every assigned partition was seen (at once, usually).
        """
        sync = self._sync
        wanted = 1
        if len(msgs) > 1:  # librdkafka's assignment() waits for its main thread: asked
            wanted = self._assigned if self._assigned is not None else len(sync.assignment())
        last: dict[Any, Any] = {}
        for m in reversed(msgs):
            if m.error() is None:
                where = (m.topic(), m.partition())
                if where not in last:
                    last[where] = m.offset()
                    if len(last) >= wanted:
                        break
        if last:
            try:
                sync.store_offsets(
                    offsets=[TopicPartition(t, p, o + 1) for (t, p), o in last.items()]
                )
            except KafkaException as exc:  # e.g. the partition was revoked meanwhile
                _log.debug("offset not stored", error=str(exc))

    def _track(self, cf: concurrent.futures.Future[Any]) -> concurrent.futures.Future[Any]:
        """Count a worker job as busy until the loop sees it done (see ``_store_handed``)."""
        self._busy += 1
        loop = self._loop

        def done(_: concurrent.futures.Future[Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed
                loop.call_soon_threadsafe(self._untrack)

        cf.add_done_callback(done)
        return cf

    def _untrack(self) -> None:
        self._busy -= 1

    def _take(self, num: int) -> list[Message]:
        """Up to ``num`` read-ahead records, stopping before an exception (raised when first)."""
        ahead = self._ahead
        out: list[Message]
        if not self._bad:  # the usual case: records only
            if len(ahead) <= num:
                out = list(ahead)  # type: ignore[arg-type]
                ahead.clear()
            else:
                out = [ahead.popleft() for _ in range(num)]  # type: ignore[misc]
            self._handed(out)
            return out
        first = ahead[0]
        if isinstance(first, BaseException):
            ahead.popleft()
            self._bad -= 1
            if isinstance(first, DeserializationError):
                self._handed([first.message])
            raise first
        out = []
        while ahead and len(out) < num and not isinstance(ahead[0], BaseException):
            out.append(ahead.popleft())  # type: ignore[arg-type]
        self._handed(out)
        return out

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the AIOConsumer is closed")

    async def poll(self, timeout: float = -1) -> Message | None:
        """The next record or event, or ``None`` after ``timeout`` seconds (negative: wait
        until one comes). The loop is free meanwhile; cancelling leaves the consumer usable.

        Raises DeserializationError as the sync consumer does; RuntimeError once closed.
        """
        got = await self._next(1, timeout)
        return got[0] if got else None

    async def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        """Up to ``num_messages`` records and events, as soon as some are there (at most
        ``timeout`` seconds, negative: until some come); ``[]`` on timeout.

        Raises DeserializationError as the sync consumer does; RuntimeError once closed.
        """
        return await self._next(max(num_messages, 1), timeout)

    async def _next(self, num: int, timeout: float) -> list[Message]:
        self._check_open()
        if self._may_read_here():
            await self._read_ready(num)
            self._check_open()
            if not self._ahead and timeout == 0:
                return []
        loop = self._loop
        deadline = None if timeout < 0 else loop.time() + timeout
        while not self._ahead:
            left = SLICE if deadline is None else max(0.0, min(SLICE, deadline - loop.time()))
            await self._read(num, left)
            self._check_open()
            if not self._ahead and deadline is not None and loop.time() >= deadline:
                return []
        out = self._take(num)
        if num > 1 and not self._reads_here:
            self._prefetch_next(num)
        return out

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Message:
        """The next record or event; ends (StopAsyncIteration) once the consumer is closed.

        Raises DeserializationError for a record that failed (iterate again to go on).
        """
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._ahead:
                now = _clock()
                if now - self._turned >= TURN_AFTER:  # records handled for a while: a turn
                    self._turned = now
                    await asyncio.sleep(0)
                    continue
                if self._bad:
                    msg = self._take(1)[0]
                else:  # the usual case, kept lean: one record handed
                    msg = self._ahead.popleft()  # type: ignore[assignment]
                    if self._store:
                        self._unstored.append(msg)
                        if not self._storing:
                            self._storing = True
                            self._loop.call_soon(self._store_handed)
                if not self._reads_here:
                    self._prefetch_next(ITER_BATCH)
                return msg
            if self._unstored:  # stored before reading on: those records can go now
                self._store_handed()
            if self._may_read_here():
                await self._read_ready(ITER_BATCH)
                if self._ahead or self._closed:
                    continue
            await self._read(ITER_BATCH, SLICE)

    # -- the rest of the consumer, on the worker thread -------------------------------------

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        nested = self._nested
        if nested is None:
            self._check_open()
        self._store_handed()  # a commit (or anything else) sees every record handed so far
        if nested is not None:  # the worker waits in a rebalance callback: it runs this
            # (also in close(): on_revoke may commit, librdkafka's close serves it)
            cf: concurrent.futures.Future[Any] = concurrent.futures.Future()
            nested.put((cf, lambda: fn(*args, **kwargs)))
            return await asyncio.wrap_future(cf, loop=self._loop)
        cf = self._track(self._worker.submit(lambda: fn(*args, **kwargs)))
        return await asyncio.wrap_future(cf, loop=self._loop)

    def _on_loop(self, callback: Callable[..., Any]) -> Callable[..., Any]:
        """A rebalance callback for librdkafka, called with this consumer first.

        A coroutine function runs on the loop while the worker thread, inside librdkafka's
        callback, runs the consumer calls the coroutine awaits (librdkafka takes them from
        the thread in its callback, as a sync callback would make them; from any other
        thread they would wait for the callback to end: a deadlock).
        """
        loop = self._loop

        def call(_raw: object, *args: Any) -> Any:
            if not inspect.iscoroutinefunction(callback):
                return callback(self, *args)
            nested: queue.SimpleQueue[Any] = queue.SimpleQueue()
            self._nested = nested
            try:
                done = asyncio.run_coroutine_threadsafe(callback(self, *args), loop)
                done.add_done_callback(lambda _: nested.put(None))
                while (job := nested.get()) is not None:
                    cf, fn = job
                    if cf.set_running_or_notify_cancel():
                        try:
                            cf.set_result(fn())
                        except BaseException as exc:
                            cf.set_exception(exc)
                return done.result()
            finally:
                self._nested = None

        return call

    async def subscribe(self, topics: list[str], **callbacks: Any) -> None:
        """Subscribe (rebalance callbacks ``on_assign``/``on_revoke``/``on_lost`` as keywords).

        With rebalance callbacks, every read runs on the worker thread (a read serves them).
        """
        self._subscribed = True  # rebalances change the assignment from now on
        self._assigned = None
        given = False
        for name in _REBALANCE_CALLBACKS:
            if callbacks.get(name) is not None:
                callbacks[name] = self._on_loop(callbacks[name])
                given = True
        if given:
            self._rebalancing = True  # before librdkafka can serve a rebalance
        await self._call(self._sync.subscribe, topics, **callbacks)
        if not given:
            self._rebalancing = False  # confluent-kafka dropped the previous callbacks

    async def unsubscribe(self) -> None:
        """Leave the subscription."""
        await self._call(self._sync.unsubscribe)

    async def assign(self, partitions: list[TopicPartition]) -> None:
        """Assign partitions directly (no group join)."""
        self._assigned = None  # while it changes
        await self._call(self._sync.assign, partitions)
        if not self._subscribed:
            self._assigned = len({(tp.topic, tp.partition) for tp in partitions})

    async def unassign(self) -> None:
        """Drop the current assignment."""
        self._assigned = None
        await self._call(self._sync.unassign)

    async def commit(self, *args: Any, **kwargs: Any) -> list[TopicPartition] | None:
        """Commit as the sync consumer does (``message=``, ``offsets=``, ``asynchronous=``);
        without arguments, the offsets of the records handed to the application so far."""
        result: list[TopicPartition] | None = await self._call(self._sync.commit, *args, **kwargs)
        return result

    async def committed(self, partitions: list[TopicPartition], timeout: float = -1) -> Any:
        """The group's committed offsets for ``partitions``."""
        return await self._call(self._sync.committed, partitions, timeout)

    async def position(self, partitions: list[TopicPartition]) -> Any:
        """The consumer's current positions."""
        return await self._call(self._sync.position, partitions)

    async def seek(self, partition: TopicPartition) -> None:
        """Move the fetch position of one partition; read-ahead records are dropped."""
        self._store_handed()
        self._drop_ahead()
        await self._call(self._sync.seek, partition)

    async def assignment(self) -> list[TopicPartition]:
        """The partitions assigned to this consumer."""
        result: list[TopicPartition] = await self._call(self._sync.assignment)
        return result

    async def pause(self, partitions: list[TopicPartition]) -> None:
        """Stop fetching ``partitions``."""
        await self._call(self._sync.pause, partitions)

    async def resume(self, partitions: list[TopicPartition]) -> None:
        """Fetch ``partitions`` again."""
        await self._call(self._sync.resume, partitions)

    async def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        """Cluster metadata (confluent-kafka's ``list_topics``)."""
        return await self._call(self._sync.list_topics, topic, timeout)

    async def get_watermark_offsets(self, partition: TopicPartition, timeout: float = -1) -> Any:
        """Low and high watermarks of one partition."""
        return await self._call(self._sync.get_watermark_offsets, partition, timeout)

    def consumer_group_metadata(self) -> Any:
        """For ``send_offsets_to_transaction`` (a local call)."""
        return self._sync.consumer_group_metadata()

    @property
    def interceptors(self) -> InterceptorChain:
        """The interceptor chain (``.errors`` counts failures per interceptor)."""
        return self._sync.interceptors

    @property
    def wrapped(self) -> Consumer:
        """The kheaders Consumer this one runs on."""
        return self._sync

    @property
    def group_id(self) -> str | None:
        """The consumer group (``group.id``) when known."""
        return self._sync.group_id

    async def close(self) -> None:
        """Leave the group and close (at most ``CLOSE_TIMEOUT`` seconds), then the interceptors.

        Idempotent; ``async for`` loops end. Records read ahead but never handed to the
        application are dropped uncommitted. Cancelling the caller does not stop the close.
        """
        if self._closing is None:
            self._store_handed()  # librdkafka's close commits what is stored (auto-commit)
            self._closed = True
            self._closing = self._loop.create_task(self._close())
        await asyncio.shield(self._closing)

    def _drop_ahead(self) -> None:
        """Drop the records read ahead, and those of reads in flight when they land."""
        self._ahead.clear()
        self._bad = 0
        self._generation += 1
        if self._prefetch is not None:
            self._prefetch.cancel()  # or, already running, it lands nothing
            self._prefetch = self._prefetched = None

    async def _close(self) -> None:
        self._drop_ahead()
        try:
            closing = asyncio.wrap_future(
                self._track(self._worker.submit(self._sync.close)), loop=self._loop
            )
            await asyncio.wait_for(closing, CLOSE_TIMEOUT)
        except TimeoutError:
            _log.warning("consumer close did not finish in time; left to its thread")
        finally:
            self._worker.stop()
            await wait_ended(self._worker.ended, 10 * SLICE)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        n = len(self.interceptors.interceptors)
        return f"<kheaders.aio.AIOConsumer {state}, {n} interceptors>"
