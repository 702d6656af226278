"""Async groups: ``kheaders.aio`` vs the sync Producer, aiokafka and confluent's own aio.

``aio:produce``: the workload's records (3 headers) through each contender, every record's
delivery learned: the async contenders await their futures in batches of ``BATCH`` records
(at most ``WINDOW`` outstanding), the sync one counts deliveries in an ``on_delivery``
callback (what a sync service does to learn each record's outcome). ``kheaders sync, no
reports`` (fire and forget) and ``confluent sync + on_delivery`` (raw confluent-kafka, the
same shared callback: librdkafka's own rate, the bound of everything built on it) are there
for context. confluent's ``AIOProducer`` cannot send headers (NotImplementedError), so it
produces the same keys and values without them, the only way it works. aiokafka gets
``acks="all"`` (librdkafka's default) and ``linger_ms=5`` like every producer here.

``aio:consume``: each contender reads the same topic from the start with ``assign()``,
reading every record's headers, in batches of ``BATCH`` (``AIOConsumer.consume`` vs
aiokafka's ``getmany(max_records=BATCH)``); the first record is read before the clock
starts. ``confluent sync consume`` (raw ``confluent_kafka.Consumer.consume``, no event loop)
is librdkafka's own rate on the same machine: the bound any async client around it has;
``kheaders sync consume`` (``kheaders.Consumer.consume``, what ``AIOConsumer`` runs on, the
same loop) is the bound of the async layer: the two differ by its own cost (target: the async
consumer at 0.95x of it or better).
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import confluent_kafka

from bench._consume import fill
from bench._model import Contender, Env, Group, PeakRss, Sample, Target
from bench._produce import Produce, _retry, _run_producer_cpu, loop_fixed
from bench._workload import Workload, workload

BATCH = 1000
WINDOW = 10 * BATCH
"""Deliveries outstanding before the oldest batch is awaited. confluent's AIOProducer serves
delivery reports only when it sends its next batch or on its 1 s timer: awaiting each batch
at once would measure that timer, not the client."""
AIO = "kheaders.aio"
SYNC = "kheaders sync + on_delivery"
CONFLUENT_SYNC = "confluent sync consume"
KHEADERS_SYNC = "kheaders sync consume"
RAW = "confluent sync + on_delivery"
"""librdkafka's own rate with one shared delivery callback: what bounds every contender on
librdkafka (kheaders' sync and async producers) in the same run."""


def _aiokafka() -> Any:
    try:
        import aiokafka
    except ImportError:
        return None
    return aiokafka


async def _timed_batches(
    send: Callable[..., Awaitable[Any]], topic: str, w: Workload
) -> tuple[float, float]:
    """Send every record; with ``WINDOW`` records outstanding, await the oldest ``BATCH``
    deliveries (all must succeed), then the rest at the end. Returns the (wall, CPU)
    seconds it took."""
    t0, c0 = time.perf_counter(), time.process_time()
    futures: deque[Any] = deque()
    for k, v, h in zip(w.keys, w.values, w.headers, strict=True):
        futures.append(await send(topic, v, k, h))
        if len(futures) >= WINDOW:
            for _ in range(BATCH):
                await futures.popleft()
    for fut in futures:
        await fut
    return time.perf_counter() - t0, time.process_time() - c0


Timed = Callable[[str, Workload], Awaitable[tuple[float, float]]]
"""An async contender's body: given topic and records, returns (wall, CPU) seconds of its
timed section (setup excluded)."""


def _sample(n: int, seconds: float, cpu: float, mem: PeakRss) -> Sample:
    """A sample with ``cpu_us``: process CPU per record, all threads (librdkafka's too)."""
    return Sample(seconds, n, mem.growth_mb, {**mem.gc_extra(n), "cpu_us": cpu / n * 1e6})


def _timed_async(env: Env, n: int, run: Timed) -> Sample:
    """``asyncio.run`` of ``run(topic, workload)``, then the topic must hold ``n`` records."""
    w = workload(n)
    topic = env.new_topic("aio")
    gc.collect()
    box: dict[str, tuple[float, float]] = {}
    with PeakRss() as mem:

        async def main() -> None:
            box["t"] = await run(topic, w)

        asyncio.run(main())
    try:
        env.check_count(topic, n)
    finally:
        env.drop_topic(topic)
    return _sample(n, *box["t"], mem)


def aio_produce_group(env: Env) -> Group:
    """Targets: kheaders.aio >= 0.8x the sync Producer, >= 3x aiokafka, >= 1.0x confluent aio;
    the sync Producer with a per-record callback >= 0.8x confluent's with the same callback."""
    cfg = env.producer_config()
    aiokafka = _aiokafka()

    def reports(make: Callable[[], Any], n: int) -> Sample:
        delivered = [0]

        def on_delivery(err: object, _msg: object) -> None:
            if err is None:
                delivered[0] += 1

        def loop(
            produce: Produce, poll: Callable[[float], object], topic: str, w: Workload
        ) -> None:
            for k, v, h in zip(w.keys, w.values, w.headers, strict=True):
                try:
                    produce(topic, value=v, key=k, headers=h, on_delivery=on_delivery)
                except BufferError:
                    _retry(
                        poll,
                        produce,
                        topic=topic,
                        value=v,
                        key=k,
                        headers=h,
                        on_delivery=on_delivery,
                    )

        sample = _run_producer_cpu(env, make, loop, n)
        if delivered[0] != n:
            raise RuntimeError(f"{n - delivered[0]} records not reported delivered")
        return sample

    def sync_reports(n: int) -> Sample:
        from kheaders import Producer

        return reports(lambda: Producer(cfg), n)

    def raw_reports(n: int) -> Sample:
        return reports(lambda: confluent_kafka.Producer(dict(cfg)), n)

    def sync_plain(n: int) -> Sample:
        from kheaders import Producer

        return _run_producer_cpu(env, lambda: Producer(cfg), loop_fixed, n)

    def kh_aio(n: int) -> Sample:
        from kheaders.aio import AIOProducer

        async def run(topic: str, w: Workload) -> tuple[float, float]:
            producer = AIOProducer(cfg)

            async def send(topic: str, v: bytes, k: bytes, h: Any) -> Any:
                return await producer.produce(topic, v, k, headers=h)

            timed = await _timed_batches(send, topic, w)
            await producer.close()
            return timed

        return _timed_async(env, n, run)

    def confluent_aio(n: int) -> Sample:
        from confluent_kafka.aio import AIOProducer

        async def run(topic: str, w: Workload) -> tuple[float, float]:
            producer = AIOProducer(dict(cfg))

            async def send(topic: str, v: bytes, k: bytes, _h: Any) -> Any:
                return await producer.produce(topic, v, k)  # headers: NotImplementedError

            timed = await _timed_batches(send, topic, w)
            await producer.close()
            return timed

        return _timed_async(env, n, run)

    def aiokafka_send(n: int) -> Sample:
        async def run(topic: str, w: Workload) -> tuple[float, float]:
            producer = aiokafka.AIOKafkaProducer(
                bootstrap_servers=env.bootstrap, linger_ms=5, acks="all", client_id="bench-client"
            )
            await producer.start()

            async def send(topic: str, v: bytes, k: bytes, h: Any) -> Any:
                return await producer.send(topic, value=v, key=k, headers=h)

            timed = await _timed_batches(send, topic, w)
            await producer.stop()
            return timed

        return _timed_async(env, n, run)

    no_aiokafka = "" if aiokafka else "unavailable: pip install aiokafka (dev extra)"
    return Group(
        name="aio:produce",
        title="Async produce, 3 headers, deliveries awaited in batches",
        baseline=SYNC,
        contenders=[
            Contender(SYNC, sync_reports),
            Contender("kheaders sync, no reports", sync_plain),
            Contender(RAW, raw_reports),
            Contender(AIO, kh_aio),
            Contender("aiokafka send", aiokafka_send if aiokafka else None, no_aiokafka),
            Contender("confluent aio, no headers", confluent_aio),
        ],
        targets=[
            Target("aio >= 0.8x sync", AIO, SYNC, ">=", 0.8),
            Target("aio >= 3x aiokafka", AIO, "aiokafka send", ">=", 3.0),
            Target("aio >= 1x confluent aio", AIO, "confluent aio, no headers", ">=", 1.0),
            Target("sync + on_delivery >= 0.8x confluent's", SYNC, RAW, ">=", 0.8),
        ],
        count=env.records,
        warmup=max(env.records // 10, 2000),
    )


def aio_consume_group(env: Env) -> Group:
    """Targets: AIOConsumer.consume >= 2x aiokafka's getmany and >= 0.95x the kheaders
    Consumer it runs on (``kheaders sync consume``), headers read on every record."""
    n_total = env.records
    topic = env.new_topic("aio-consume")
    fill(env, topic, n_total)
    aiokafka = _aiokafka()

    def kh_aio(n: int) -> Sample:
        from kheaders.aio import AIOConsumer

        async def run(_topic: str, _w: Workload) -> tuple[float, float]:
            consumer = AIOConsumer(env.consumer_config())
            tp = confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)
            await consumer.assign([tp])
            while await consumer.poll(1.0) is None:  # connection and first fetch: untimed
                pass
            seen = 0
            t0, c0 = time.perf_counter(), time.process_time()
            while seen < n - 1:
                for msg in await consumer.consume(BATCH, 1.0):
                    if len(msg.headers()) == 3:
                        seen += 1
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
            await consumer.close()
            return seconds, cpu

        return _timed_read(n, run)

    def aiokafka_getmany(n: int) -> Sample:
        async def run(_topic: str, _w: Workload) -> tuple[float, float]:
            consumer = aiokafka.AIOKafkaConsumer(
                bootstrap_servers=env.bootstrap, enable_auto_commit=False, group_id=None
            )
            await consumer.start()
            tp = aiokafka.TopicPartition(topic, 0)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            await consumer.getone()  # connection and first fetch: untimed
            seen = 0
            t0, c0 = time.perf_counter(), time.process_time()
            while seen < n - 1:
                batches = await consumer.getmany(timeout_ms=1000, max_records=BATCH)
                for records in batches.values():
                    for record in records:
                        if len(record.headers) == 3:
                            seen += 1
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
            await consumer.stop()
            return seconds, cpu

        return _timed_read(n, run)

    def sync_read(consumer: Any, n: int) -> tuple[float, float]:
        """The sync contenders' timed loop: ``n - 1`` records in batches, headers read."""
        tp = confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)
        consumer.assign([tp])
        while consumer.poll(1.0) is None:  # connection and first fetch: untimed
            pass
        seen = 0
        t0, c0 = time.perf_counter(), time.process_time()
        while seen < n - 1:  # never more than are left: consume() waits for a full batch
            for msg in consumer.consume(min(BATCH, n - 1 - seen), 1.0):
                if msg.error() is None and len(msg.headers()) == 3:
                    seen += 1
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        consumer.close()
        return seconds, cpu

    def confluent_sync(n: int) -> Sample:
        """librdkafka's own rate here: the sync raw consumer, same batches, no event loop."""

        async def run(_topic: str, _w: Workload) -> tuple[float, float]:
            return sync_read(confluent_kafka.Consumer(env.consumer_config()), n)

        return _timed_read(n, run)

    def kheaders_sync(n: int) -> Sample:
        """The kheaders Consumer that AIOConsumer runs on, read the same way: the async
        layer's own cost is the difference."""
        from kheaders import Consumer

        async def run(_topic: str, _w: Workload) -> tuple[float, float]:
            return sync_read(Consumer(env.consumer_config()), n)

        return _timed_read(n, run)

    return Group(
        name="aio:consume",
        title="Async consume, read headers, batches of 1,000",
        baseline="aiokafka getmany",
        contenders=[
            Contender(
                "aiokafka getmany",
                aiokafka_getmany if aiokafka else None,
                "" if aiokafka else "unavailable: pip install aiokafka (dev extra)",
            ),
            Contender(AIO, kh_aio),
            Contender(KHEADERS_SYNC, kheaders_sync),
            Contender(CONFLUENT_SYNC, confluent_sync),
        ],
        targets=[
            Target("aio consume >= 2x aiokafka", AIO, "aiokafka getmany", ">=", 2.0),
            Target("aio consume >= 0.95x sync", AIO, KHEADERS_SYNC, ">=", 0.95),
        ],
        count=n_total,
        warmup=max(n_total // 10, 2000),
        close=lambda: env.drop_topic(topic),
    )


def _timed_read(n: int, run: Timed) -> Sample:
    gc.collect()
    box: dict[str, tuple[float, float]] = {}
    with PeakRss() as mem:

        async def main() -> None:
            box["t"] = await run("", workload(1))

        asyncio.run(main())
    return _sample(n - 1, *box["t"], mem)


def aio_groups(env: Env) -> list[Group]:
    """The async groups: ``aio:produce`` and ``aio:consume``."""
    return [aio_produce_group(env), aio_consume_group(env)]
