"""kheaders.aio with interceptors that only acknowledge (the metrics interceptor's shape):
each record's future is its only report and runs ``on_acknowledgement`` itself, once, before
the future resolves; refusals, purges and a full queue are acknowledged exactly once too."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Any

import pytest
from confluent_kafka import KafkaError

from kheaders import HeaderLimitError, HeaderLimits, Headers, RecordMetadata
from kheaders.aio import AIOProducer
from kheaders.broker import free_port
from tests.aio.conftest import produced_in_flight, producer_config

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]


class Acks:
    """An interceptor with only ``on_acknowledgement``: what it saw, and where."""

    def __init__(self) -> None:
        self.seen: list[tuple[RecordMetadata, Any, Headers]] = []
        self.threads: set[str] = set()

    def on_acknowledgement(self, metadata: RecordMetadata, error: Any, headers: Headers) -> None:
        self.seen.append((metadata, error, headers))
        self.threads.add(threading.current_thread().name)


async def test_each_delivery_is_acknowledged_once_before_its_future_resolves(
    bootstrap: str, topic: str
) -> None:
    acks = Acks()
    acked_when_resolved: list[int] = []
    async with AIOProducer(producer_config(bootstrap), interceptors=[acks]) as producer:
        futures = []
        for i in range(20):
            fut = await producer.produce(topic, b"v%d" % i, headers=[("i", b"%d" % i)])
            fut.add_done_callback(lambda _f: acked_when_resolved.append(len(acks.seen)))
            futures.append(fut)
        delivered = await asyncio.gather(*futures)
    assert [m.offset() for m in delivered] == list(range(20))
    assert [(md.topic, md.offset) for md, _, _ in acks.seen] == [(topic, i) for i in range(20)]
    assert all(err is None for _, err, _ in acks.seen)
    assert [h.to_list() for _, _, h in acks.seen] == [[("i", b"%d" % i)] for i in range(20)]
    assert all(h.read_only for _, _, h in acks.seen)
    assert all(md.latency is not None and md.latency >= 0 for md, _, _ in acks.seen)
    # the message's headers are the very Headers the interceptor saw
    assert all(m.headers() is h for m, (_, _, h) in zip(delivered, acks.seen, strict=True))
    assert all(n >= i + 1 for i, n in enumerate(acked_when_resolved))
    assert acks.threads == {"kheaders-aio-delivery"}


async def test_a_record_refused_at_produce_is_acknowledged_once_with_its_error(
    bootstrap: str, topic: str
) -> None:
    acks = Acks()
    async with AIOProducer(
        producer_config(bootstrap), interceptors=[acks], limits=HeaderLimits(max_headers=1)
    ) as producer:
        with pytest.raises(HeaderLimitError):
            await producer.produce(topic, b"x", headers=[("a", b"1"), ("b", b"2")])
        ok = await (await producer.produce(topic, b"y", headers=[("a", b"1")]))
    assert ok.error() is None
    assert [type(err) for _, err, _ in acks.seen] == [HeaderLimitError, type(None)]


async def test_in_flight_a_record_keeps_only_its_future_and_purges_are_acknowledged() -> None:
    acks = Acks()
    config = {"bootstrap.servers": f"127.0.0.1:{free_port()}", "log_level": 0}
    producer = AIOProducer(config, interceptors=[acks])
    lists = [[("traceparent", b"%055d" % i), ("client.id", b"svc")] for i in range(64)]
    per_record, futures = await produced_in_flight(producer, lists)
    n = len(futures)
    assert per_record <= 1.01  # the future itself (held here too)
    assert await producer.close(0.3) == n
    outcomes = await asyncio.gather(*futures, return_exceptions=True)
    assert {o.args[0].code() for o in outcomes} == {KafkaError._PURGE_QUEUE}  # type: ignore[union-attr]
    assert len(acks.seen) == n
    assert {err.code() for _, err, _ in acks.seen} == {KafkaError._PURGE_QUEUE}
    assert acks.seen[1][2].to_list() == lists[1]


async def test_a_full_queue_parks_records_and_acknowledges_each_once(
    bootstrap: str, topic: str
) -> None:
    acks = Acks()
    config = producer_config(bootstrap, **{"queue.buffering.max.messages": 5, "linger.ms": 1})
    async with AIOProducer(config, interceptors=[acks]) as producer:
        futures = [
            await producer.produce(topic, b"%04d" % i, headers=[("i", b"%d" % i)])
            for i in range(300)
        ]
        delivered = await asyncio.gather(*futures)
    assert all(m.error() is None for m in delivered)
    assert [m.value() for m in delivered] == [b"%04d" % i for i in range(300)]
    per_offset = Counter(md.offset for md, err, _ in acks.seen if err is None)
    assert sorted(per_offset) == list(range(300))
    assert set(per_offset.values()) == {1}
    assert len(acks.seen) == 300
