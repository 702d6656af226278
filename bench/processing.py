"""The processors' overhead against hand-written loops with the same no-op handler.

    python -m bench.processing [--records N] [--rounds R] [--bootstrap HOST:PORT]

Sync: ``kheaders.processing.Processor`` against a hand-written at-least-once loop on
``kheaders.Consumer`` (``consume(500)``, the handler in ``try``, explicit offsets committed
asynchronously once a second, as the processor does). Async: ``kheaders.aio.AIOProcessor``
(``concurrency`` 1 and 8) against the same loop written on aiokafka (``getmany``, ``await
handler``, offsets committed once a second), and on kheaders.aio's AIOConsumer. Each
contender reads the same topic (one partition, 3 headers, 100-byte values) with a fresh
consumer group; the clock runs from the first record handled to the last, so group joins are
left out. Rounds alternate the contenders; the median rate of each is reported, and the
ratios to the loops.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import confluent_kafka
from confluent_kafka import TopicPartition

import kheaders
from kheaders.aio import AIOProcessor
from kheaders.broker import create_topic, fast_consumer_config, find_or_start_broker
from kheaders.processing import Processor

HEADERS = [("trace", b"0123456789abcdef"), ("client", b"svc-a"), ("ver", b"\x00\x00\x00\x01")]
VALUE = b"v" * 100


class Clock:
    """Counts handled records; notes the first and the last one's time; ``done`` at ``n``."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.count = 0
        self.first = self.last = 0.0
        self.done = threading.Event()

    def tick(self) -> None:
        if not self.count:
            self.first = time.perf_counter()
        self.count += 1
        if self.count == self.n:
            self.last = time.perf_counter()
            self.done.set()

    def rate(self) -> float:
        return (self.n - 1) / (self.last - self.first)


def fill(bootstrap: str, n: int) -> str:
    topic = create_topic(bootstrap, f"bench-processing-{uuid.uuid4().hex[:8]}", partitions=1)
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 50})
    for i in range(n):
        while True:
            try:
                p.produce(topic, VALUE, str(i % 1000).encode(), headers=HEADERS)
                break
            except BufferError:
                p.poll(0.05)
    p.flush(120)
    return topic


def _config(bootstrap: str) -> dict[str, Any]:
    return fast_consumer_config(bootstrap, f"bench-{uuid.uuid4().hex[:8]}")


def hand_sync(bootstrap: str, topic: str, n: int) -> float:
    clock = Clock(n)
    handler = _noop(clock)
    config = {**_config(bootstrap), "enable.auto.commit": False, "enable.auto.offset.store": False}
    consumer = kheaders.Consumer(config)
    consumer.subscribe([topic])
    last_commit = time.monotonic()
    done: dict[tuple[str, int], int] = {}
    while not clock.done.is_set():
        for msg in consumer.consume(500, 0.5):
            if msg.error() is not None:
                continue
            try:
                handler(msg)
            except Exception:
                continue
            done[(msg.topic(), msg.partition())] = msg.offset() + 1
        if time.monotonic() - last_commit >= 1.0 and done:
            consumer.commit(
                offsets=[TopicPartition(t, p, o) for (t, p), o in done.items()],
                asynchronous=True,
            )
            last_commit = time.monotonic()
    consumer.close()
    return clock.rate()


def _noop(clock: Clock) -> Callable[[Any], None]:
    def handler(_msg: Any) -> None:
        clock.tick()

    return handler


def processor_sync(bootstrap: str, topic: str, n: int) -> float:
    clock = Clock(n)
    proc = Processor(_config(bootstrap), [topic], _noop(clock), handle_signals=False)
    runner = threading.Thread(target=proc.run)
    runner.start()
    clock.done.wait()
    proc.stop()
    runner.join()
    return clock.rate()


def _async_noop(clock: Clock) -> Callable[[Any], Any]:
    async def handler(_msg: Any) -> None:
        clock.tick()

    return handler


def processor_async(bootstrap: str, topic: str, n: int, concurrency: int) -> float:
    clock = Clock(n)

    async def main() -> None:
        proc = AIOProcessor(
            _config(bootstrap),
            [topic],
            _async_noop(clock),
            concurrency=concurrency,
            handle_signals=False,
        )
        task = asyncio.create_task(proc.run())
        while not clock.done.is_set():
            await asyncio.sleep(0.05)
        proc.stop()
        await task

    asyncio.run(main())
    return clock.rate()


def hand_aio(bootstrap: str, topic: str, n: int) -> float:
    """The async loop on kheaders' own AIOConsumer: what the AIOProcessor stands on."""
    from kheaders.aio import AIOConsumer

    clock = Clock(n)
    handler = _async_noop(clock)

    async def main() -> None:
        config = {
            **_config(bootstrap),
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
        }
        consumer = AIOConsumer(config)
        await consumer.subscribe([topic])
        last_commit = time.monotonic()
        done: dict[tuple[str, int], int] = {}
        while not clock.done.is_set():
            for msg in await consumer.consume(500, 0.5):
                if msg.error() is not None:
                    continue
                try:
                    await handler(msg)
                except Exception:
                    continue
                done[(msg.topic(), msg.partition())] = msg.offset() + 1
            if time.monotonic() - last_commit >= 1.0 and done:
                offsets = [TopicPartition(t, p, o) for (t, p), o in done.items()]
                await consumer.commit(offsets=offsets, asynchronous=True)
                last_commit = time.monotonic()
        await consumer.close()

    asyncio.run(main())
    return clock.rate()


def hand_aiokafka(bootstrap: str, topic: str, n: int) -> float:
    from aiokafka import AIOKafkaConsumer  # bench only: the pure-Python asyncio peer
    from aiokafka.structs import TopicPartition as AioTP

    clock = Clock(n)
    handler = _async_noop(clock)

    async def main() -> None:
        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=f"bench-{uuid.uuid4().hex[:8]}",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
        )
        await consumer.start()
        last_commit = time.monotonic()
        done: dict[Any, int] = {}
        try:
            while not clock.done.is_set():
                batches = await consumer.getmany(timeout_ms=500, max_records=500)
                for tp, msgs in batches.items():
                    for msg in msgs:
                        try:
                            await handler(msg)
                        except Exception:
                            continue
                        done[AioTP(tp.topic, tp.partition)] = msg.offset + 1
                if time.monotonic() - last_commit >= 1.0 and done:
                    await consumer.commit(dict(done))
                    last_commit = time.monotonic()
        finally:
            await consumer.stop()

    asyncio.run(main())
    return clock.rate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bootstrap", default=None)
    args = parser.parse_args()
    broker = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        broker = find_or_start_broker(allow_docker=False)
        bootstrap = broker.bootstrap
    try:
        n = args.records
        topic = fill(bootstrap, n)
        contenders: dict[str, Callable[[], float]] = {
            "sync loop (kheaders.Consumer)": lambda: hand_sync(bootstrap, topic, n),
            "Processor": lambda: processor_sync(bootstrap, topic, n),
            "async loop (aiokafka)": lambda: hand_aiokafka(bootstrap, topic, n),
            "async loop (kheaders.aio)": lambda: hand_aio(bootstrap, topic, n),
            "AIOProcessor concurrency=1": lambda: processor_async(bootstrap, topic, n, 1),
            "AIOProcessor concurrency=8": lambda: processor_async(bootstrap, topic, n, 8),
        }
        rates: dict[str, list[float]] = {name: [] for name in contenders}
        names = list(contenders)
        for r in range(args.rounds):
            for name in names[r % len(names) :] + names[: r % len(names)]:
                rates[name].append(contenders[name]())
        median = {name: statistics.median(v) for name, v in rates.items()}
        print(f"{n:,} records, 1 partition, 3 headers, no-op handler, {args.rounds} rounds")
        for name, rate in median.items():
            print(
                f"  {name:32s} {rate:>12,.0f} records/s  (rounds: "
                + ", ".join(f"{x:,.0f}" for x in rates[name])
                + ")"
            )
        sync_loop = median["sync loop (kheaders.Consumer)"]
        aio_loop = median["async loop (aiokafka)"]
        print(f"  Processor / sync loop:                  {median['Processor'] / sync_loop:.2f}x")
        own_loop = median["async loop (kheaders.aio)"]
        for c in (1, 8):
            rate = median[f"AIOProcessor concurrency={c}"]
            print(
                f"  AIOProcessor concurrency={c} / aiokafka loop: {rate / aio_loop:.2f}x,"
                f" / kheaders.aio loop: {rate / own_loop:.2f}x"
            )
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
