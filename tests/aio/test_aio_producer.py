"""AIOProducer on the real broker: headers, futures, interceptors, serializers, limits,
backpressure, close, broker down."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kheaders import (
    ConfigurationError,
    HeaderLimitError,
    HeaderLimits,
    Headers,
    JsonDeserializer,
    JsonSerializer,
    ProducerRecord,
    ReadOnlyHeadersError,
    RecordMetadata,
    SerializationError,
)
from kheaders.aio import AIOProducer
from kheaders.broker import free_port
from tests.aio.conftest import (
    OpenConsumer,
    aio_threads,
    produced_in_flight,
    producer_config,
    read_all,
    still_running,
)

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

ODD_HEADERS: list[tuple[str, bytes | None]] = [
    ("dup", b"1"),
    ("null", None),
    ("dup", b"2"),
    ("empty", b""),
    ("ключ", "значение".encode()),
    ("bin", bytes(range(256))),
]


class Recorder:
    """An interceptor recording what it saw, and on which thread."""

    def __init__(self) -> None:
        self.sent: list[ProducerRecord] = []
        self.acks: list[tuple[RecordMetadata, object, Headers]] = []
        self.ack_threads: set[str] = set()

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        record.headers.add("seen.by", b"recorder")
        self.sent.append(record)
        return record

    def on_acknowledgement(self, metadata: RecordMetadata, error: object, headers: Headers) -> None:
        self.acks.append((metadata, error, headers))
        self.ack_threads.add(threading.current_thread().name)


async def test_headers_round_trip_byte_for_byte(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer
) -> None:
    fut = await producer.produce(topic, b"v0", b"k0", headers=ODD_HEADERS)
    assert isinstance(fut, asyncio.Future)
    delivered = await fut
    assert delivered.error() is None
    assert delivered.offset() == 0
    sent = delivered.headers()
    assert isinstance(sent, Headers)
    assert sent.to_list() == ODD_HEADERS
    with pytest.raises(ReadOnlyHeadersError):
        sent.add("late", b"x")
    plain = await (await producer.produce(topic, b"v1", b"k1"))
    assert plain.headers() == Headers()  # never None
    as_dict = await (await producer.produce(topic, b"v2", headers={"a": "text", "b": b"\x00"}))
    assert as_dict.headers().to_list() == [("a", b"text"), ("b", b"\x00")]

    consumer = await open_consumer(topic)
    got = await read_all(consumer, 3)
    assert [m.value() for m in got] == [b"v0", b"v1", b"v2"]
    assert got[0].headers().to_list() == ODD_HEADERS
    assert got[1].headers() == Headers()
    assert got[1].headers() is not None
    assert got[2].headers().to_list() == [("a", b"text"), ("b", b"\x00")]


async def test_send_returns_metadata_once_delivered(producer: AIOProducer, topic: str) -> None:
    first = await producer.send(ProducerRecord(topic, b"a", b"k", Headers([("h", b"1")])))
    second = await producer.send(ProducerRecord(topic, b"bb", None))
    assert isinstance(first, RecordMetadata)
    assert (first.topic, first.partition, first.offset) == (topic, 0, 0)
    assert second.offset == 1
    assert second.serialized_value_size == 2
    closed = Headers([("h", b"1")]).close()
    with pytest.raises(ReadOnlyHeadersError):
        await producer.send(ProducerRecord(topic, b"a", headers=closed))


async def test_interceptors_and_serializers_run_as_in_the_sync_producer(
    bootstrap: str, topic: str, open_consumer: OpenConsumer
) -> None:
    recorder = Recorder()
    config = producer_config(
        bootstrap,
        **{
            "client.id": "aio-service",
            "interceptor.classes": "kheaders.interceptors.client_id.ClientIdInterceptor",
        },
    )
    async with AIOProducer(
        config, interceptors=[recorder], value_serializer=JsonSerializer()
    ) as producer:
        futures = [await producer.produce(topic, {"n": i}, f"k{i}") for i in range(20)]
        await asyncio.gather(*futures)
        assert [r.value for r in recorder.sent] == [{"n": i} for i in range(20)]
        assert len(recorder.acks) == 20
        assert all(err is None for _, err, _ in recorder.acks)
        assert recorder.ack_threads == {"kheaders-aio-delivery"}  # never the loop's thread
    consumer = await open_consumer(topic, value_deserializer=JsonDeserializer())
    got = await read_all(consumer, 20)
    assert [m.value() for m in got] == [{"n": i} for i in range(20)]
    headers = got[0].headers()
    assert headers.last_value("client.id") == b"aio-service"
    assert headers.last_value("seen.by") == b"recorder"
    assert headers.last_value("content-type") == b"application/json"


async def test_limits_and_serializer_failures_raise_from_produce(
    bootstrap: str, topic: str
) -> None:
    recorder = Recorder()
    async with AIOProducer(
        producer_config(bootstrap),
        interceptors=[recorder],
        value_serializer=JsonSerializer(),
        limits=HeaderLimits(max_headers=2),
    ) as producer:
        with pytest.raises(HeaderLimitError):
            await producer.produce(topic, {"a": 1}, headers=[("a", b"1"), ("b", b"2")])
        with pytest.raises(SerializationError):
            await producer.produce(topic, {"not json": object()})
        ok = await (await producer.produce(topic, {"a": 1}))
        assert ok.error() is None
    # every record acknowledged once: two failures at produce, one delivery
    assert [err is None for _, err, _ in recorder.acks] == [False, False, True]


async def test_config_on_delivery_is_refused(bootstrap: str) -> None:
    with pytest.raises(ConfigurationError, match="on_delivery"):
        AIOProducer(producer_config(bootstrap, on_delivery=print))


async def test_full_queue_waits_for_room_never_buffer_error(
    bootstrap: str, topic: str, open_consumer: OpenConsumer
) -> None:
    """A queue of 5 records, 2,000 records from one task and 40 tasks: no BufferError, the
    loop keeps running while produce() waits, and every record arrives once, in order."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    config = producer_config(bootstrap, **{"queue.buffering.max.messages": 5, "linger.ms": 1})
    async with AIOProducer(config) as producer:
        tick_task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        futures = [
            await producer.produce(topic, b"%05d" % i, headers=[("i", b"%d" % i)])
            for i in range(1000)
        ]
        assert ticks > 0  # produce() waited (and let the loop run) while the queue was full

        async def task(t: int) -> list[Any]:
            return [await producer.produce(topic, b"%05d" % (1000 + t * 25 + j)) for j in range(25)]

        per_task = await asyncio.gather(*(task(t) for t in range(40)))
        futures += [f for fs in per_task for f in fs]
        delivered = await asyncio.gather(*futures)
        tick_task.cancel()
        assert len(producer) == 0
    assert all(m.error() is None for m in delivered)
    consumer = await open_consumer(topic)
    got = [m.value() for m in await read_all(consumer, 2000)]
    assert got[:1000] == [b"%05d" % i for i in range(1000)]  # one task: its order kept
    assert sorted(got) == [b"%05d" % i for i in range(2000)]  # all, once


async def test_close_is_idempotent_bounded_and_leaves_no_thread(
    bootstrap: str, topic: str, no_thread_left: None
) -> None:
    producer = AIOProducer(producer_config(bootstrap))
    fut = await producer.produce(topic, b"v")
    started = time.monotonic()
    results = await asyncio.gather(producer.close(5), producer.close(5))
    assert results == [0, 0]
    assert await producer.close() == 0
    assert time.monotonic() - started < 30  # bounded by the 5 s asked, not message.timeout.ms
    assert (await fut).error() is None  # delivered before close returned
    with pytest.raises(RuntimeError, match="closed"):
        await producer.produce(topic, b"late")
    with pytest.raises(RuntimeError, match="closed"):
        await asyncio.wait_for(producer.flush(1), 2)  # raises, never waits for a dead thread
    assert not still_running(aio_threads())


async def test_broker_down_fails_every_future_within_message_timeout(
    no_thread_left: None,
) -> None:
    config = {
        "bootstrap.servers": f"127.0.0.1:{free_port()}",
        "message.timeout.ms": 1500,
        "log_level": 0,
    }
    recorder = Recorder()
    producer = AIOProducer(config, interceptors=[recorder])
    started = time.monotonic()
    futures = [await producer.produce("nowhere", b"%d" % i) for i in range(200)]
    outcomes = await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 10)
    elapsed = time.monotonic() - started
    assert all(isinstance(o, KafkaException) for o in outcomes)
    codes = {o.args[0].code() for o in outcomes}  # type: ignore[union-attr]
    assert codes <= {KafkaError._MSG_TIMED_OUT, KafkaError._TRANSPORT}
    assert elapsed < 10  # message.timeout.ms (1.5 s) applied, not its 300 s default
    assert len(recorder.acks) == 200  # interceptors saw each failure once
    # what close reports left is only the unreachable broker's own events by now (records
    # were all failed above): none of them is a record reported again
    await asyncio.wait_for(producer.close(1), 5)
    assert len(recorder.acks) == 200


async def test_close_purges_what_cannot_be_delivered_and_fails_its_futures(
    no_thread_left: None,
) -> None:
    config = {"bootstrap.servers": f"127.0.0.1:{free_port()}", "log_level": 0}
    producer = AIOProducer(config)
    futures = [await producer.produce("nowhere", b"x") for _ in range(10)]
    started = time.monotonic()
    # librdkafka's count of what is left also holds the unreachable broker's own error events
    # not yet served (one arrived during close under load: 11): at least the 10 records
    assert await producer.close(0.3) >= 10
    assert time.monotonic() - started < 30  # the 0.3 s asked, not message.timeout.ms (300 s)
    outcomes = await asyncio.gather(*futures, return_exceptions=True)
    assert {o.args[0].code() for o in outcomes} == {KafkaError._PURGE_QUEUE}  # type: ignore[union-attr]


async def test_a_record_in_flight_keeps_only_its_future_alive(no_thread_left: None) -> None:
    """The future is the record's delivery report and carries its headers (a snapshot of
    the caller's list): nothing else per record waits for librdkafka's report."""
    config = {"bootstrap.servers": f"127.0.0.1:{free_port()}", "log_level": 0}
    producer = AIOProducer(config)
    lists = [[("traceparent", b"%055d" % i), ("client.id", b"svc")] for i in range(64)]
    per_record, futures = await produced_in_flight(producer, lists)
    assert per_record <= 1.01  # the future itself (held here too)
    lists[1].append(("late", b"x"))  # a caller changing its list after produce
    assert await producer.close(0.3) >= len(futures)  # and the broker's error events left
    outcomes = await asyncio.gather(*futures, return_exceptions=True)
    assert {o.args[0].code() for o in outcomes} == {KafkaError._PURGE_QUEUE}  # type: ignore[union-attr]


async def test_a_record_sent_keeps_only_its_future_alive(no_thread_left: None) -> None:
    """``send`` on a producer nothing intercepts: the future that becomes the record's
    RecordMetadata is its delivery report too; per task, exactly what awaiting any plain
    future keeps (the task, its coroutine, the future, its wake-up), nothing more."""
    config = {"bootstrap.servers": f"127.0.0.1:{free_port()}", "log_level": 0}
    producer = AIOProducer(config)
    loop = asyncio.get_running_loop()
    n = 1000
    records = [ProducerRecord("nowhere", b"x") for _ in range(n)]

    async def awaiting_a_future(_record: ProducerRecord) -> None:
        await loop.create_future()

    async def alive_per_task(fn: Callable[[ProducerRecord], Awaitable[object]]) -> float:
        gc.collect()
        before = len(gc.get_objects())
        tasks = [asyncio.create_task(fn(r)) for r in records]  # type: ignore[arg-type]
        await asyncio.sleep(0)  # each task runs to its await
        gc.collect()
        alive = (len(gc.get_objects()) - before) / n
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for _ in range(3):  # the cancellations' callbacks run out before the next count
            await asyncio.sleep(0)
        return alive

    sending = await alive_per_task(producer.send)
    reference = await alive_per_task(awaiting_a_future)
    assert sending - reference <= 0.01
    assert await producer.close(0.3) == n


async def test_delivered_headers_are_those_sent_whatever_the_caller_did_after(
    producer: AIOProducer, topic: str
) -> None:
    h: list[tuple[str, bytes | None]] = [("a", b"1")]
    first = await producer.produce(topic, b"v", headers=h)
    h.append(("b", b"2"))
    passed = Headers([("c", b"3")])
    second = await producer.produce(topic, b"w", headers=passed)
    assert (await first).headers() == [("a", b"1")]
    assert (await first).headers().read_only
    assert (await second).headers() is passed


async def test_transactions_are_awaitable_and_carry_the_headers(
    bootstrap: str, topic: str, open_consumer: OpenConsumer
) -> None:
    import uuid

    config = producer_config(bootstrap, **{"transactional.id": f"aio-{uuid.uuid4().hex[:8]}"})
    recorder = Recorder()
    async with AIOProducer(config, interceptors=[recorder]) as producer:
        await producer.init_transactions(15)
        await producer.begin_transaction()
        futures = [
            await producer.produce(topic, b"%d" % i, headers={"n": b"%d" % i}) for i in range(3)
        ]
        consumer = await open_consumer(topic)
        await producer.send_offsets_to_transaction(
            [TopicPartition(topic, 0, 0)], consumer.consumer_group_metadata(), 15
        )
        await producer.commit_transaction(15)
        delivered = await asyncio.gather(*futures)  # committed: every future resolved
    assert [m.headers().last_value("n") for m in delivered] == [b"0", b"1", b"2"]
    assert len(recorder.acks) == 3
    got = await read_all(consumer, 3)
    assert [(m.value(), m.headers().last_value("seen.by")) for m in got] == [
        (b"%d" % i, b"recorder") for i in range(3)
    ]
