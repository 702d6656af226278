"""The smoke tier on the embedded Tansu broker: what ``kheaders demo`` and ``kheaders broker``
users meet first. The integration tier runs on Apache Kafka (tests/README.md); here each
capability a new user tries on the embedded broker is shown to work there once: the clients
with headers and interceptors, the asyncio pair, and a processor that retries and
dead-letters. Tansu's limits (no aborted-record filtering, no KIP-848 or share groups, memory
storage) are FIELD-NOTES facts, not tested here.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from confluent_kafka import TopicPartition

from kheaders import Consumer, Headers, Producer, ProducerRecord
from kheaders.aio import AIOConsumer, AIOProducer
from kheaders.broker import create_topic
from kheaders.processing import Processor, RetryTopics
from tests.processing.helpers import Running, config, produce, read_all, wait_for

pytestmark = pytest.mark.integration

HEADERS = [("dup", b"1"), ("null", None), ("empty", b""), ("dup", b"2"), ("clé", b"w")]


class Stamp:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        record.headers.add("stamped", b"yes")
        return record


def _topic(bootstrap: str, partitions: int = 1) -> str:
    return create_topic(bootstrap, f"smoke-{uuid.uuid4().hex[:8]}", partitions=partitions)


def test_sync_clients_round_trip_headers_through_interceptors(tansu_bootstrap: str) -> None:
    topic = _topic(tansu_bootstrap)
    producer = Producer({"bootstrap.servers": tansu_bootstrap}, interceptors=[Stamp()])
    producer.produce(topic, b"v", b"k", headers=HEADERS)
    assert producer.flush(15) == 0
    consumer = Consumer({"bootstrap.servers": tansu_bootstrap, "group.id": "smoke"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        got: list[Any] = []
        for _ in range(100):
            got += [m for m in consumer.consume(1, 0.1) if m.error() is None]
            if got:
                break
    finally:
        consumer.close()
    headers = got[0].headers()
    assert isinstance(headers, Headers)
    assert headers.to_list() == [*HEADERS, ("stamped", b"yes")]


def test_asyncio_clients_round_trip_headers(tansu_bootstrap: str) -> None:
    topic = _topic(tansu_bootstrap)

    async def main() -> list[tuple[str, bytes | None]]:
        async with AIOProducer({"bootstrap.servers": tansu_bootstrap}) as producer:
            delivered = await (await producer.produce(topic, b"v", headers=HEADERS))
            assert delivered.error() is None
        consumer = AIOConsumer({"bootstrap.servers": tansu_bootstrap, "group.id": "smoke-aio"})
        await consumer.assign([TopicPartition(topic, 0, 0)])
        try:
            for _ in range(100):
                got = [m for m in await consumer.consume(1, 0.1) if m.error() is None]
                if got:
                    return list(got[0].headers().to_list())
        finally:
            await consumer.close()
        raise AssertionError("no record")

    assert asyncio.run(main()) == HEADERS


def test_processor_retries_then_dead_letters_on_tansu(tansu_bootstrap: str) -> None:
    topic = _topic(tansu_bootstrap)
    produce(tansu_bootstrap, topic, [{"key": b"k", "value": b"bad"}, {"key": b"k", "value": b"ok"}])
    calls: list[tuple[str, bytes]] = []

    def handle(msg: Any) -> None:
        calls.append((msg.topic(), msg.value()))
        if msg.value() == b"bad":
            raise ValueError("always")

    running = Running(
        Processor(config(tansu_bootstrap), [topic], handle, retry=RetryTopics(delays=[0.2]))
    )
    try:
        dead = read_all(tansu_bootstrap, f"{topic}-dlt", 1)
        wait_for(lambda: (topic, b"ok") in calls, what="the good record")
    finally:
        running.stop()
    assert [r.value for r in dead] == [b"bad"]
    tried_on = [t for t, value in calls if value == b"bad"]
    assert len(tried_on) == 2  # the first try, then the retry
    assert tried_on[0] == topic
    assert tried_on[1].startswith(f"{topic}-retry")
