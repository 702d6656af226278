"""The processors' overhead against hand-written loops with the same no-op handler.

    python -m bench.processing [--records N] [--rounds R] [--bootstrap HOST:PORT] [--icount N]

Sync: ``kheaders.processing.Processor`` against a hand-written at-least-once loop on
``kheaders.Consumer`` (``consume(500)``, the handler in ``try``, explicit offsets committed
asynchronously once a second, as the processor does). Async: ``kheaders.aio.AIOProcessor``
(``concurrency`` 1 and 8) against the same loop written on aiokafka (``getmany``, ``await
handler``, offsets committed once a second), and on kheaders.aio's AIOConsumer. Each
contender reads the same topic (one partition, 3 headers, 100-byte values) with a fresh
consumer group; the clock runs from the first record handled to the last, so group joins are
left out. Rounds alternate the contenders; the median rate of each is reported, and the
ratios to the loops.

``--icount N`` counts instead, under callgrind, AIOProcessor's instructions per record on
the loop side (engine, lanes, workers) at concurrency 1 and 8, on N fake records (no broker).
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import TopicPartition

import kheaders
from bench._contest import Clock, Contender, arguments, broker, contest, fill
from kheaders.aio import AIOProcessor
from kheaders.broker import fast_consumer_config
from kheaders.processing import Processor

FETCH_BYTES = 16 * 1024 * 1024
"""Per-partition fetch size for every contender (librdkafka's and aiokafka's default, 1 MiB,
makes one partition on the embedded broker fetch-bound near 110,000 records/s, hiding
what is measured here: the handling loop)."""


def _config(bootstrap: str) -> dict[str, Any]:
    return fast_consumer_config(
        bootstrap, f"bench-{uuid.uuid4().hex[:8]}", **{"max.partition.fetch.bytes": FETCH_BYTES}
    )


def hand_sync(bootstrap: str, topic: str, n: int) -> tuple[float, float]:
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


def processor_sync(bootstrap: str, topic: str, n: int) -> tuple[float, float]:
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


def processor_async(bootstrap: str, topic: str, n: int, concurrency: int) -> tuple[float, float]:
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


def hand_aio(bootstrap: str, topic: str, n: int) -> tuple[float, float]:
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


def hand_aiokafka(bootstrap: str, topic: str, n: int) -> tuple[float, float]:
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
            max_partition_fetch_bytes=FETCH_BYTES,
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


def icount(records: int) -> dict[int, float]:
    """AIOProcessor's instructions per record on the loop side (callgrind; fake records, no
    broker: bench._aio_icount), by concurrency: a run handling ``records`` less one handling
    none, over ``records``."""
    out = {}
    for concurrency in (1, 8):
        counts = []
        for handled in (records, 0):
            cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
            cmd += ["-m", "bench._aio_icount", str(records), str(handled), str(concurrency)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            found = re.search(r"Collected : (\d+)", done.stderr)
            if done.returncode != 0 or found is None:
                raise RuntimeError(f"callgrind run failed: {done.stderr[-2000:]}")
            counts.append(int(found.group(1)))
        out[concurrency] = (counts[0] - counts[1]) / records
    return out


def main() -> None:
    args = arguments(__doc__, 300_000, icount="AIOProcessor's instructions per record instead")
    if args.icount:
        for concurrency, per_record in icount(args.icount).items():
            print(f"AIOProcessor concurrency={concurrency}: {per_record:,.0f} instructions/record")
        return
    with broker(args.bootstrap, apache=False) as bootstrap:
        n = args.records
        topic = fill(bootstrap, n)
        contenders: dict[str, Contender] = {
            "sync loop (kheaders.Consumer)": lambda: hand_sync(bootstrap, topic, n),
            "Processor": lambda: processor_sync(bootstrap, topic, n),
            "async loop (aiokafka)": lambda: hand_aiokafka(bootstrap, topic, n),
            "async loop (kheaders.aio)": lambda: hand_aio(bootstrap, topic, n),
            "AIOProcessor concurrency=1": lambda: processor_async(bootstrap, topic, n, 1),
            "AIOProcessor concurrency=8": lambda: processor_async(bootstrap, topic, n, 8),
        }
        heading = f"{n:,} records, 1 partition, 3 headers, no-op handler, {args.rounds} rounds;"
        pairs = [
            ("Processor", "sync loop (kheaders.Consumer)"),
            ("AIOProcessor concurrency=1", "async loop (aiokafka)"),
            ("AIOProcessor concurrency=1", "async loop (kheaders.aio)"),
            ("AIOProcessor concurrency=8", "async loop (aiokafka)"),
            ("AIOProcessor concurrency=8", "async loop (kheaders.aio)"),
        ]
        contest(contenders, args.rounds, heading, pairs)


if __name__ == "__main__":
    main()
