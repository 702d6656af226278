"""AIOConsumer on the real broker: record semantics, deserialization failures, async for,
cancellation, offsets of records read ahead, interceptors, dead letters."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from typing import Any

import pytest
from confluent_kafka import KafkaException, Message, TopicPartition

from kheaders import (
    ConfigurationError,
    DeserializationError,
    Headers,
    JsonDeserializer,
)
from kheaders.aio import AIOConsumer, AIOProducer
from kheaders.deadletter import DeadLetterPublisher
from tests.aio.conftest import OpenConsumer, aio_threads, consumer_config, read_all

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]


async def _produce(producer: AIOProducer, topic: str, values: list[bytes]) -> None:
    futures = [
        await producer.produce(topic, v, headers=[("n", b"%d" % i)]) for i, v in enumerate(values)
    ]
    await asyncio.gather(*futures)


class ConsumeRecorder:
    def __init__(self) -> None:
        self.consumed: list[int] = []
        self.committed: list[list[TopicPartition]] = []

    def on_consume(self, messages: list[Message]) -> list[Message]:
        self.consumed.extend(m.offset() for m in messages)
        return messages

    def on_commit(self, offsets: list[TopicPartition]) -> None:
        self.committed.append(offsets)


async def test_poll_and_consume_raise_deserialization_error_for_that_record_only(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer
) -> None:
    await _produce(producer, topic, [b'{"a": 1}', b"{not json", b'{"a": 3}'] * 2)
    consumer = await open_consumer(topic, value_deserializer=JsonDeserializer())
    first = await consumer.poll(10)
    assert first is not None
    assert first.value() == {"a": 1}
    assert isinstance(first.headers(), Headers)
    assert first.headers().last_value("n") == b"0"
    with pytest.raises(DeserializationError) as info:
        await consumer.poll(10)
    assert info.value.message.value() == b"{not json"
    assert info.value.message.offset() == 1
    third = await consumer.poll(10)
    assert third is not None
    assert third.value() == {"a": 3}
    # consume(): the records before the failure, then the failure, then on: in order
    batch = await consumer.consume(10, 10)
    assert [m.value() for m in batch] == [{"a": 1}]
    with pytest.raises(DeserializationError) as info:
        await consumer.consume(10, 10)  # raises as soon as offset 4 is there
    assert info.value.message.offset() == 4
    assert [m.value() for m in await consumer.consume(10, 10)] == [{"a": 3}]
    assert await consumer.poll(0.3) is None


async def test_async_for_yields_records_and_ends_when_closed(
    producer: AIOProducer, topic: str, bootstrap: str, no_thread_left: None
) -> None:
    await _produce(producer, topic, [b"%d" % i for i in range(30)])
    consumer = AIOConsumer(consumer_config(bootstrap))
    await consumer.assign([TopicPartition(topic, 0, 0)])
    seen: list[bytes] = []

    async def iterate() -> None:
        async for msg in consumer:
            if msg.error() is None:
                seen.append(msg.value())

    task = asyncio.create_task(iterate())
    while len(seen) < 30:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)  # the loop is now waiting for more
    await consumer.close()
    await asyncio.wait_for(task, 10)  # ended by close, without an exception (10 s: a hang)
    assert seen == [b"%d" % i for i in range(30)]
    await consumer.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        await consumer.poll(0)


async def test_cancelled_poll_raises_at_once_and_the_consumer_stays_usable(
    producer: AIOProducer, topic: str, bootstrap: str, no_thread_left: None
) -> None:
    consumer = AIOConsumer(consumer_config(bootstrap))
    await consumer.assign([TopicPartition(topic, 0, 0)])
    waiting = asyncio.create_task(consumer.poll(10))
    await asyncio.sleep(0.3)
    waiting.cancel()
    # At once: done within the loop's next turns, while the worker's poll slice (0.1 s) is
    # still waiting; counted in turns, not milliseconds (a busy machine stretches both).
    for _ in range(5):
        await asyncio.sleep(0)
    assert waiting.done()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await _produce(producer, topic, [b"after"])
    msg = await consumer.poll(10)
    assert msg is not None
    assert msg.value() == b"after"
    assert len(aio_threads()) >= 1
    await consumer.close()


@pytest.mark.parametrize("where", ["loop", "worker"])
async def test_reads_cancelled_at_random_moments_lose_and_repeat_nothing(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer, where: str
) -> None:
    """Reads on the loop thread, and (with an ``error_cb``) every read on the worker."""
    count = 3000
    await _produce(producer, topic, [b"%05d" % i for i in range(count)])
    config = {} if where == "loop" else {"error_cb": lambda err: None}
    consumer = await open_consumer(topic, config=config)
    rng = random.Random(5)
    got: list[bytes] = []
    cancelled = 0
    # a lost record would make this wait forever: fail once no record arrived for 30 s (a
    # deadline on the whole run failed a busy machine that was slow, not stuck)
    progressed, seen = time.monotonic(), 0
    while len(got) < count:
        if len(got) > seen:
            progressed, seen = time.monotonic(), len(got)
        assert time.monotonic() - progressed < 30, f"read {len(got)} of {count}, then nothing"
        # small reads: many of them wait on a fetch, so enough are cancelled on any machine
        task = asyncio.create_task(consumer.consume(rng.randrange(1, 50), 1))
        await asyncio.sleep(rng.choice([0, 0, 0.0005, 0.002]))
        if task.cancel():
            cancelled += 1
        with contextlib.suppress(asyncio.CancelledError):
            got.extend(m.value() for m in await task if m.error() is None)
    assert cancelled > 10
    assert got == [b"%05d" % i for i in range(count)]


@pytest.mark.parametrize("where", ["loop", "worker"])
async def test_a_record_comes_at_once_after_many_cancelled_reads(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer, where: str
) -> None:
    """A read cancelled while it waits on an empty partition must not keep the worker (its
    slice, 0.1 s, for nobody) nor make the next read wait behind it. They did: each cancelled
    read stayed queued, and a later ``poll`` waited for its own read, queued after them all,
    although an earlier one had read the record long before (and the offset stored from the
    loop thread waited for the queue too: one thread at a time gets into a client)."""
    cancelled = 300  # 30 s of slices queued, if they stay
    config = {} if where == "loop" else {"error_cb": lambda err: None}
    consumer = await open_consumer(topic, config=config)
    for _ in range(cancelled):
        task = asyncio.create_task(consumer.consume(10, 1))
        for _ in range(3):  # it looks for held records, submits its read to the worker, waits
            await asyncio.sleep(0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    started = time.monotonic()
    await _produce(producer, topic, [b"a"])
    first = await consumer.poll(30)
    await _produce(producer, topic, [b"b"])
    second = await consumer.poll(30)
    waited = time.monotonic() - started
    assert first is not None
    assert second is not None
    assert [first.value(), second.value()] == [b"a", b"b"]
    # a deadline, not a timing: the queued slices alone would take 30 s
    assert waited < 15, f"two records took {waited:.1f} s"
    # whatever is still queued ends at once now, so close() does not wait behind it
    await _produce(producer, topic, [b"x"] * (10 * cancelled))


async def test_records_read_ahead_are_not_committed(
    producer: AIOProducer, topic: str, bootstrap: str
) -> None:
    await _produce(producer, topic, [b"%d" % i for i in range(50)])
    config = consumer_config(bootstrap)
    consumer = AIOConsumer(config)
    await consumer.assign([TopicPartition(topic, 0, 0)])
    async for msg in consumer:  # reads ahead in a batch of up to 500
        if msg.offset() == 2:
            break
    await consumer.commit(asynchronous=False)
    committed = await consumer.committed([TopicPartition(topic, 0)], 10)
    assert committed[0].offset == 3  # the records handed to the application, not the batch
    await consumer.close()
    again = AIOConsumer(config)
    await again.assign(committed)
    msg = await again.poll(10)
    assert msg is not None
    assert msg.offset() == 3
    await again.close()


@pytest.mark.parametrize("store", ["1", "t", " TRUE "])
async def test_auto_offset_store_spelt_as_librdkafka_reads_true_still_stores_at_hand_over(
    producer: AIOProducer, topic: str, bootstrap: str, store: str
) -> None:
    """librdkafka reads ``1`` and ``t`` as true: the consumer must read them so too, or
    librdkafka stores the offsets of the whole batch read ahead."""
    await _produce(producer, topic, [b"%d" % i for i in range(50)])
    consumer = AIOConsumer(consumer_config(bootstrap, **{"enable.auto.offset.store": store}))
    await consumer.assign([TopicPartition(topic, 0, 0)])
    async for msg in consumer:  # reads ahead in a batch of up to 500
        if msg.offset() == 2:
            break
    await consumer.commit(asynchronous=False)
    committed = await consumer.committed([TopicPartition(topic, 0)], 10)
    await consumer.close()
    assert committed[0].offset == 3  # the records handed to the application, not the batch


async def test_auto_offset_store_off_in_any_spelling_stores_nothing(
    producer: AIOProducer, topic: str, bootstrap: str
) -> None:
    await _produce(producer, topic, [b"%d" % i for i in range(5)])
    consumer = AIOConsumer(consumer_config(bootstrap, **{"enable.auto.offset.store": "off"}))
    await consumer.assign([TopicPartition(topic, 0, 0)])
    assert len(await read_all(consumer, 5)) == 5
    with pytest.raises(KafkaException, match="NO_OFFSET"):  # nothing stored to commit
        await consumer.commit(asynchronous=False)
    committed = await consumer.committed([TopicPartition(topic, 0)], 10)
    await consumer.close()
    assert committed[0].offset < 0  # nothing stored, nothing committed


async def test_auto_offset_store_with_a_word_nobody_reads_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"enable\.auto\.offset\.store"):
        AIOConsumer({"group.id": "g", "enable.auto.offset.store": "sometimes"})


async def test_interceptors_see_consumes_and_commits(
    producer: AIOProducer, topic: str, open_consumer: OpenConsumer
) -> None:
    await _produce(producer, topic, [b"a", b"b", b"c"])
    recorder = ConsumeRecorder()
    consumer = await open_consumer(topic, interceptors=[recorder])
    await read_all(consumer, 3)
    assert recorder.consumed == [0, 1, 2]
    await consumer.commit(asynchronous=False)
    assert [[(tp.topic, tp.offset) for tp in c] for c in recorder.committed] == [[(topic, 3)]]


async def test_a_record_that_fails_goes_to_the_dead_letter_topic(
    bootstrap: str, topic_factory: Any, open_consumer: OpenConsumer
) -> None:
    source = topic_factory()
    dlt = topic_factory()
    async with AIOProducer({"bootstrap.servers": bootstrap}) as producer:
        await _produce(producer, source, [b'{"ok": 1}', b"{bad"])
        dead_letters = DeadLetterPublisher(producer.wrapped, dlt)
        consumer = await open_consumer(source, value_deserializer=JsonDeserializer())
        assert (await consumer.poll(10)).value() == {"ok": 1}  # type: ignore[union-attr]
        with pytest.raises(DeserializationError) as info:
            await consumer.poll(10)
        dead_letters.publish(info.value)
        assert await producer.flush(10) == 0
    dead = await read_all(await open_consumer(dlt), 1)
    assert dead[0].value() == b"{bad"
    assert dead[0].headers().last_value("n") == b"1"  # the original headers, then the DLT ones
    assert dead[0].headers().last_value("kheaders.dlt.original.offset") == b"1"


async def test_a_json_record_dead_lettered_after_handling_keeps_its_consumed_bytes(
    bootstrap: str, topic_factory: Any, open_consumer: OpenConsumer
) -> None:
    source = topic_factory()
    dlt = topic_factory()
    spaced = b'{"z": [1,  2], "a": "\\u00e9"}'  # not what json.dumps would give back
    async with AIOProducer({"bootstrap.servers": bootstrap}) as producer:
        await _produce(producer, source, [spaced])
        dead_letters = DeadLetterPublisher(producer.wrapped, dlt)
        consumer = await open_consumer(source, value_deserializer=JsonDeserializer())
        msg = await consumer.poll(10)
        assert msg is not None
        assert msg.value() == {"z": [1, 2], "a": "\u00e9"}
        dead_letters.publish(msg, ValueError("handler failed"))
        assert await producer.flush(10) == 0
    dead = await read_all(await open_consumer(dlt), 1)
    assert dead[0].value() == spaced
    assert dead[0].headers().last_value("n") == b"0"


async def test_commit_covers_every_partition_of_a_batch(
    producer: AIOProducer, topic_factory: Any, open_consumer: OpenConsumer
) -> None:
    topic = topic_factory(partitions=3)
    futures = [await producer.produce(topic, b"v", partition=i % 3) for i in range(30)]
    await asyncio.gather(*futures)
    consumer = await open_consumer(topic, partitions=3)
    await read_all(consumer, 30)
    await consumer.commit(asynchronous=False)
    wanted = [TopicPartition(topic, p) for p in range(3)]
    assert [tp.offset for tp in await consumer.committed(wanted, 10)] == [10, 10, 10]


async def test_subscribe_with_a_coroutine_rebalance_callback(
    producer: AIOProducer, topic: str, bootstrap: str
) -> None:
    """The callback runs on the loop; awaiting the consumer's own methods in it never
    deadlocks (the worker thread waits for the callback)."""
    from kheaders.broker import fast_consumer_config

    await _produce(producer, topic, [b"a", b"b"])
    assigned: list[tuple[list[TopicPartition], object]] = []

    async def on_assign(consumer: AIOConsumer, partitions: list[TopicPartition]) -> None:
        assert asyncio.get_running_loop() is loop
        assigned.append((partitions, await consumer.assignment()))

    loop = asyncio.get_running_loop()
    consumer = AIOConsumer(fast_consumer_config(bootstrap, f"aio-sub-{topic}"))
    await consumer.subscribe([topic], on_assign=on_assign)
    got = [m.value() for m in await read_all(consumer, 2, timeout=30)]
    await consumer.close()
    assert got == [b"a", b"b"]
    assert [[tp.partition for tp in parts] for parts, _ in assigned] == [[0]]
    assert isinstance(assigned[0][1], list)
