"""The event loop is never blocked: a 10 ms ticker keeps ticking while 100,000 records are
produced and while a poll waits for data.

Measured in events, not seconds: the producing test counts the records produced between two
turns of the ticker (each record carries a spin of known minimum duration, so the run lasts
long enough on a fast machine, and a busy machine slows the records and the ticks alike); the
poll test counts the ticker's turns while the poll is still waiting. Each measure has a
companion test showing it fails when the loop gets no turn."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from kheaders import Consumer
from kheaders.aio import AIOProducer
from kheaders.aio import _producer as producer_module
from tests.aio.conftest import (
    OpenConsumer,
    consumer_config,
    longest_span,
    producer_config,
    work_of,
)

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

TICK = 0.010
RECORDS = 100_000
WORK_PER_RECORD = 10e-6
"""100,000 records of at least 10 µs each: at least 1 s of producing, ~100 ticks of 10 ms."""
LONGEST_SPAN = RECORDS // 40
"""2,500 records (>= 25 ms of work): a tick's 10 ms of records (<= 1,000) plus two of the
task's turns (produce() gives the loop one every YIELD_EVERY = 256 records; the timer wakes the
ticker on one, the ticker runs on the next): 1,024-1,536 seen, idle and beside two CPU burners.
A loop turned only when the task awaits its batch of 5,000 deliveries shows spans of 5,000, a
blocked loop one span of every record."""
WAITING_TICKS = 50
HEADERS = [("traceparent", b"00-" + b"a" * 32 + b"-" + b"b" * 16 + b"-01"), ("client.id", b"x")]


async def _produce_with_ticks(producer: AIOProducer, topic: str) -> list[int]:
    """Produce RECORDS records (with WORK_PER_RECORD of work each, awaiting the deliveries
    every 5,000) beside a 10 ms ticker; return how many had been produced at each tick."""
    work = work_of(WORK_PER_RECORD)
    produced = 0
    marks: list[int] = []

    async def ticker() -> None:
        while True:
            marks.append(produced)
            await asyncio.sleep(TICK)

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0)  # the ticker's first mark: 0
    batch = []
    for i in range(RECORDS):
        batch.append(await producer.produce(topic, b"%d" % i, headers=HEADERS))
        work()
        produced += 1
        if len(batch) == 5000:
            for fut in batch:
                assert (await fut).error() is None
            batch.clear()
    tick.cancel()
    return [m for m in marks if 0 < m < RECORDS]


async def _still_waiting_after_ticks(waiting: asyncio.Future[Any]) -> int:
    """The ticker's turns (up to WAITING_TICKS) taken while ``waiting`` is not done yet."""
    for ticks in range(WAITING_TICKS):
        if waiting.done():
            return ticks
        await asyncio.sleep(TICK)
    return WAITING_TICKS


async def test_ticker_keeps_ticking_while_producing_100k_records(
    bootstrap: str, topic: str
) -> None:
    async with AIOProducer(producer_config(bootstrap, **{"linger.ms": 5})) as producer:
        marks = await _produce_with_ticks(producer, topic)
        assert len(producer) == 0
    assert len(marks) >= 9, f"the ticker ran {len(marks)} times in {RECORDS} records"
    assert longest_span(marks, RECORDS) <= LONGEST_SPAN, marks


async def test_the_producing_measure_fails_when_the_loop_gets_no_turn(
    bootstrap: str, topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With produce()'s turns switched off, the loop turns only while the task awaits its
    deliveries (every 5,000 records): the measure above sees spans longer than it allows."""
    monkeypatch.setattr(producer_module, "YIELD_EVERY", RECORDS * 10)
    async with AIOProducer(producer_config(bootstrap, **{"linger.ms": 5})) as producer:
        marks = await _produce_with_ticks(producer, topic)
    assert longest_span(marks, RECORDS) > LONGEST_SPAN, marks


async def test_ticker_keeps_ticking_while_a_poll_waits(
    topic: str, open_consumer: OpenConsumer, producer: AIOProducer
) -> None:
    """The ticker runs WAITING_TICKS times while a poll waits for a record; the record
    produced after that (by the same loop) is what the poll then returns."""
    consumer = await open_consumer(topic)
    poll = asyncio.ensure_future(consumer.poll(30))
    assert await _still_waiting_after_ticks(poll) == WAITING_TICKS, poll
    assert (await (await producer.produce(topic, b"late"))).error() is None
    msg = await asyncio.wait_for(poll, 30)
    assert msg is not None
    assert msg.error() is None
    assert msg.value() == b"late"


async def test_the_poll_measure_fails_when_the_poll_waits_on_the_loop(
    bootstrap: str, topic: str
) -> None:
    """A poll that waits on the loop thread (the sync consumer's, 1 s on an empty topic) is
    done before the ticker's first turn: the measure above sees no tick while it waits."""
    consumer = Consumer(consumer_config(bootstrap))
    try:
        poll = asyncio.ensure_future(_on_the_loop(lambda: consumer.poll(1.0)))
        assert await _still_waiting_after_ticks(poll) == 1  # the check before the poll ran
        assert await poll is None
    finally:
        consumer.close()


async def _on_the_loop(call: Callable[[], Any]) -> Any:
    """``call()`` inside a coroutine, without awaiting anything: it holds the loop."""
    return call()
