"""Where AIOConsumer reads: records librdkafka already holds on the loop thread (when nothing
that read serves needs another thread), the loop still getting its turns; everything else on
the worker thread, rebalance callbacks included while records flow."""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition

from kheaders import Headers, JsonDeserializer
from kheaders.aio import AIOConsumer, AIOProducer
from kheaders.aio import _consumer as consumer_module
from kheaders.broker import fast_consumer_config
from tests.aio.conftest import OpenConsumer, read_all

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

WORKER = "kheaders-aio-consumer"


async def _fill(producer: AIOProducer, topic: str, count: int, partitions: int = 1) -> None:
    futures = [
        await producer.produce(topic, b"%d" % i, partition=i % partitions, headers=[("n", b"x")])
        for i in range(count)
    ]
    for fut in futures:
        assert (await fut).error() is None


async def _held(consumer: AIOConsumer) -> None:
    """Read one record, then give librdkafka time to fetch the rest (all produced before)."""
    assert await consumer.poll(10) is not None
    await asyncio.sleep(1.0)


class Threads:
    """An interceptor noting the thread each ``on_consume`` ran on."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def on_consume(self, messages: list[Message]) -> list[Message]:
        self.names.append(threading.current_thread().name)
        return messages


async def _threads_used(
    open_consumer: OpenConsumer, topic: str, count: int, **kwargs: Any
) -> set[str]:
    threads = Threads()
    consumer = await open_consumer(topic, interceptors=[threads], **kwargs)
    await _held(consumer)
    threads.names.clear()
    got = await read_all(consumer, count - 1)
    assert len(got) == count - 1
    assert all(isinstance(m.headers(), Headers) for m in got)
    return set(threads.names)


async def test_records_already_held_are_read_on_the_loop_thread(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer
) -> None:
    await _fill(producer, topic, 3000)
    used = await _threads_used(open_consumer, topic, 3000, value_deserializer=JsonDeserializer())
    assert threading.current_thread().name in used


@pytest.mark.parametrize(
    "setting",
    [
        {"config": {"logger": logging.getLogger("aio-test")}},
        {"interceptors_on_commit": True},
        {"value_deserializer": "custom"},
    ],
    ids=["logger", "interceptor_on_commit", "user_deserializer"],
)
async def test_reads_stay_on_the_worker_when_a_read_could_run_user_code_on_the_loop(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer, setting: dict[str, Any]
) -> None:
    """A logger and an interceptor's ``on_commit`` run inside the read that serves them, and a
    user's deserializer may wait on the network: with any of them, no read runs on the loop."""
    await _fill(producer, topic, 1000)
    kwargs: dict[str, Any] = {}
    if "config" in setting:
        kwargs["config"] = setting["config"]
    extra: list[object] = []
    if setting.get("interceptors_on_commit"):

        class Commits:
            def on_commit(self, offsets: list[TopicPartition]) -> None:
                pass

        extra.append(Commits())
    if setting.get("value_deserializer"):

        class Upper:
            def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> object:
                return None if data is None else data.upper()

        kwargs["value_deserializer"] = Upper()
    threads = Threads()
    consumer = await open_consumer(topic, interceptors=[threads, *extra], **kwargs)
    await _held(consumer)
    await read_all(consumer, 999)
    assert threads.names
    assert set(threads.names) == {WORKER}


async def test_config_callbacks_a_loop_read_serves_run_on_the_worker(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer
) -> None:
    """``stats_cb``, ``on_commit`` (and ``error_cb``, ``throttle_cb``) served by a read on the
    loop thread are handed to the worker thread, where they are documented to run."""
    await _fill(producer, topic, 3000)
    ran: dict[str, list[str]] = {"stats": [], "commit": []}
    config = {
        "statistics.interval.ms": 100,
        "stats_cb": lambda stats: ran["stats"].append(threading.current_thread().name),
        "on_commit": lambda err, tps: ran["commit"].append(threading.current_thread().name),
        "error_cb": lambda err: None,
    }
    threads = Threads()
    consumer = await open_consumer(topic, interceptors=[threads], config=config)
    await _held(consumer)
    threads.names.clear()
    await read_all(consumer, 2000)
    await consumer.commit(asynchronous=True)
    await read_all(consumer, 999)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while not ran["commit"] or len(ran["stats"]) < 2:
        assert loop.time() < deadline, f"callbacks seen: {ran}"
        await consumer.consume(10, 0.05)
    assert threading.current_thread().name in threads.names  # read on the loop thread
    assert set(ran["stats"]) == {WORKER}
    assert ran["commit"] == [WORKER]


async def test_what_a_handed_on_callback_raises_is_raised_by_a_later_read(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer
) -> None:
    await _fill(producer, topic, 10)

    raised: list[bool] = []

    def stats_cb(stats: str) -> None:
        if not raised:  # once: close() serves stats too
            raised.append(True)
            raise ValueError("stats refused")

    config = {"statistics.interval.ms": 100, "stats_cb": stats_cb}
    consumer = await open_consumer(topic, config=config)

    async def read_on() -> None:
        for _ in range(100):  # 10 s at most: stats come every 0.1 s
            await consumer.consume(10, 0.1)

    with pytest.raises(ValueError, match="stats refused"):
        await read_on()


def _work_of(seconds: float) -> Callable[[], None]:
    """The application's own work per record: ``seconds`` of wall time spent on the loop
    thread without awaiting (a spin on the clock: the same on a fast machine and a busy one,
    so the read lasts long enough to count the loop's turns)."""

    def work() -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    return work


async def _turns_while_reading(
    consumer: AIOConsumer, how: str, count: int, work: Callable[[], None]
) -> list[int]:
    """Read ``count`` held records, working on each without awaiting, beside a 10 ms ticker;
    return how many records had been handled at each of the ticker's turns during the read.

    Counted in records, not seconds: a busy machine stretches the read and the ticks alike,
    a fast one shortens both; a loop that gets no turn shows as one span of every record.
    """
    seen = 0
    marks: list[int] = []

    async def ticker() -> None:
        while True:
            marks.append(seen)
            await asyncio.sleep(0.010)

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0)  # the ticker's first mark: 0
    if how == "consume":
        while seen < count:
            for _ in await consumer.consume(100, 5):  # handled without awaiting
                work()
                seen += 1
    else:
        async for _ in consumer:
            work()
            seen += 1
            if seen == count:
                break
    done = seen
    tick.cancel()
    return [m for m in marks if 0 < m < done]


def _longest_span(marks: list[int], count: int) -> int:
    """The most records handled between two turns of the loop (read start and end included)."""
    return max(b - a for a, b in itertools.pairwise([0, *marks, count]))


TICK_RECORDS = 20_000
WORK_PER_RECORD = 50e-6
"""20,000 records of 50 µs each: at least 1 s of reading, about 100 ticks of 10 ms."""


@pytest.mark.parametrize("how", ["consume", "async for"])
async def test_ticker_keeps_ticking_while_held_records_are_read_on_the_loop(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer, how: str
) -> None:
    """Records that are always there never make a read wait: the consumer gives the loop a
    turn every few milliseconds instead (in ``async for`` between records), so other tasks
    run while a task reads: the ticker runs all through the read, never more than a tenth of
    the records apart (~100 ms of work; a turn every 5 ms gives one every ~200 records)."""
    await _fill(producer, topic, TICK_RECORDS + 1)
    consumer = await open_consumer(topic)
    await _held(consumer)
    marks = await _turns_while_reading(consumer, how, TICK_RECORDS, _work_of(WORK_PER_RECORD))
    assert len(marks) >= 9, f"the ticker ran {len(marks)} times in {TICK_RECORDS} records"
    assert _longest_span(marks, TICK_RECORDS) <= TICK_RECORDS // 10, marks


async def test_the_ticker_measure_fails_when_the_loop_gets_no_turn(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer, monkeypatch: Any
) -> None:
    """The measure above can fail: with the turns switched off, records held are read and
    handled on the loop without a turn, and the ticker sees one span of every record."""
    count = 5000
    await _fill(producer, topic, count + 1)
    consumer = await open_consumer(topic)
    await _held(consumer)
    monkeypatch.setattr(consumer_module, "TURN_AFTER", 3600.0)
    marks = await _turns_while_reading(consumer, "async for", count, _work_of(WORK_PER_RECORD))
    assert _longest_span(marks, count) > count // 10, marks


async def test_handed_records_are_stored_before_the_loop_s_next_turn(
    producer: AIOProducer, topic: str, bootstrap: str
) -> None:
    """Auto-commit commits what reached the application once the task yields, never the
    records read ahead."""
    await _fill(producer, topic, 50)
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": f"aio-{uuid.uuid4().hex[:8]}",
        "auto.commit.interval.ms": 100,
    }
    async with AIOConsumer(config) as consumer:
        await consumer.assign([TopicPartition(topic, 0, 0)])
        async for msg in consumer:  # reads ahead up to 500 records
            if msg.offset() == 9:
                break
        await asyncio.sleep(1.0)  # a few auto-commits
        committed = await consumer.committed([TopicPartition(topic, 0)], 10)
        assert committed[0].offset == 10


@pytest.mark.timeout(120)
async def test_coroutine_rebalance_callbacks_run_while_records_flow(
    producer: AIOProducer, topic_factory: Any, bootstrap: str
) -> None:
    """A second member joins while the first reads: its coroutine on_revoke/on_assign run on
    the loop (awaiting the consumer's own methods) and reading goes on; a read on the loop
    thread serving them would deadlock."""
    topic = topic_factory(partitions=2)
    group = f"aio-flow-{uuid.uuid4().hex[:8]}"
    await _fill(producer, topic, 2000, partitions=2)
    loop = asyncio.get_running_loop()
    events: list[tuple[str, int]] = []
    codes: list[int] = []

    async def on_assign(consumer: AIOConsumer, partitions: list[TopicPartition]) -> None:
        assert asyncio.get_running_loop() is loop
        assert isinstance(await consumer.assignment(), list)  # the worker runs it meanwhile
        events.append(("assign", len(partitions)))

    async def on_revoke(consumer: AIOConsumer, partitions: list[TopicPartition]) -> None:
        try:  # also served by close(): the consumer's methods still work in it
            await consumer.commit(asynchronous=False)
        except KafkaException as exc:  # nothing handed from them yet: fine
            codes.append(exc.args[0].code())
        events.append(("revoke", len(partitions)))

    first = AIOConsumer(fast_consumer_config(bootstrap, group, **{"enable.auto.commit": False}))
    second = AIOConsumer(fast_consumer_config(bootstrap, group, **{"enable.auto.commit": False}))
    try:
        await first.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
        got = await read_all(first, 100, timeout=30)
        await second.subscribe([topic])
        seen_second = 0
        deadline = loop.time() + 60
        while events[-1] != ("assign", 1):
            assert loop.time() < deadline, f"no rebalance seen: {events}"
            got.extend(await first.consume(100, 0.2))
            seen_second += len(await second.consume(100, 0.05))
        assert events[0] == ("assign", 2)
        assert ("revoke", 2) in events
        before = len(got)
        await _fill(producer, topic, 200, partitions=2)  # reading goes on, on one partition
        while len(got) < before + 100:
            assert loop.time() < deadline, f"read {len(got) - before} of 100 after the rebalance"
            got.extend(await first.consume(100, 0.5))
            seen_second += len(await second.consume(100, 0.05))
    finally:
        await asyncio.gather(first.close(), second.close())
    assert events[-1] == ("revoke", 1)  # at close, the consumer's methods still work in it
    assert set(codes) <= {KafkaError._NO_OFFSET}
