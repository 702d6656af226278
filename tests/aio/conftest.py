"""Fixtures of the async clients' tests: configs, and a consumer reading a topic from the start."""

from __future__ import annotations

import asyncio
import gc
import itertools
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio
from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from kheaders.aio import AIOConsumer, AIOProducer

AIO_THREADS = ("kheaders-aio-",)


def aio_threads() -> list[threading.Thread]:
    """The async clients' threads still alive."""
    return [t for t in threading.enumerate() if t.name.startswith(AIO_THREADS)]


def still_running(threads: list[threading.Thread], grace: float = 2.0) -> list[threading.Thread]:
    """``threads`` still alive after ``grace`` seconds: a thread that told the loop it ends
    may need a moment (a scheduler slice on a busy machine) to be gone."""
    for t in threads:
        t.join(grace)
    return [t for t in threads if t.is_alive()]


def producer_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "linger.ms": 2}
    config.update(extra)
    return config


def consumer_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": f"aio-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
    config.update(extra)
    return config


async def read_all(consumer: AIOConsumer, count: int, timeout: float = 20.0) -> list[Any]:
    """``count`` records (error events skipped), or fail after ``timeout`` seconds."""
    import asyncio

    out: list[Any] = []
    deadline = asyncio.get_running_loop().time() + timeout
    while len(out) < count:
        assert asyncio.get_running_loop().time() < deadline, f"read {len(out)} of {count}"
        out.extend(m for m in await consumer.consume(1000, 1.0) if m.error() is None)
    return out


@pytest.fixture
def no_thread_left() -> Any:
    """Fails a test that leaves an async client's thread running."""
    before = set(aio_threads())
    yield
    left = still_running([t for t in aio_threads() if t not in before])
    assert not left, f"threads left running: {left}"


@pytest_asyncio.fixture
async def producer(bootstrap: str) -> AsyncIterator[AIOProducer]:
    p = AIOProducer(producer_config(bootstrap))
    yield p
    await p.close(10)


OpenConsumer = Callable[..., Awaitable[AIOConsumer]]


@pytest_asyncio.fixture
async def open_consumer(bootstrap: str) -> AsyncIterator[OpenConsumer]:
    """``await open_consumer(topic, **kwargs)``: a consumer assigned ``topic`` from the start."""
    opened: list[AIOConsumer] = []

    async def make(topic: str, partitions: int = 1, **kwargs: Any) -> AIOConsumer:
        config = consumer_config(bootstrap, **kwargs.pop("config", {}))
        consumer = AIOConsumer(config, **kwargs)
        opened.append(consumer)
        await consumer.assign(
            [TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)]
        )
        return consumer

    yield make
    for consumer in opened:
        await consumer.close()


async def produced_in_flight(
    producer: AIOProducer, lists: list[list[tuple[str, bytes]]], n: int = 1000
) -> tuple[float, list[asyncio.Future[Any]]]:
    """Produce ``n`` records (headers cycling through ``lists``) to a broker nobody answers;
    return the objects alive per record while they wait for their reports, and the futures."""
    gc.collect()
    before = len(gc.get_objects())
    futures = [
        await producer.produce("nowhere", b"x", headers=lists[i % len(lists)]) for i in range(n)
    ]
    gc.collect()
    return (len(gc.get_objects()) - before) / n, futures


def work_of(seconds: float) -> Callable[[], None]:
    """The application's own work per record: ``seconds`` of wall time spent on the loop
    thread without awaiting (a spin on the clock: the same on a fast machine and a busy one,
    so the read lasts long enough to count the loop's turns)."""

    def work() -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    return work


def longest_span(marks: list[int], count: int) -> int:
    """The most records handled between two turns of the loop (read start and end included)."""
    return max(b - a for a, b in itertools.pairwise([0, *marks, count]))
