"""The new consumer group protocol (KIP-848, ``group.protocol=consumer``) beside the classic one.

Under KIP-848 the broker assigns partitions incrementally and keeps the session settings
itself (librdkafka refuses ``session.timeout.ms`` from the client). Every consumer kheaders
offers, and the runners built on them, must work on both: the sync and asyncio consumers,
the processor (whose revoke commits what was handled) and the mirror
(tests/mirror/test_mirror_group_protocol.py).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

from kheaders import Consumer
from kheaders.aio import AIOConsumer
from kheaders.broker import Broker, fast_consumer_config
from kheaders.processing import Processor
from tests.mirror.conftest import wait_for
from tests.processing.helpers import Running

pytestmark = pytest.mark.integration

PROTOCOLS = ["classic", "consumer"]


@pytest.fixture(autouse=True)
def _kip848_needs_kafka(broker: Broker) -> None:
    if broker.kind == "embedded":
        pytest.skip("Tansu 0.6 serves no KIP-848 consumer groups: tested on Apache Kafka")


def group_config(bootstrap: str, protocol: str, **extra: Any) -> dict[str, Any]:
    return fast_consumer_config(
        bootstrap, f"g-{uuid.uuid4().hex[:8]}", **{"group.protocol": protocol, **extra}
    )


def produce(bootstrap: str, topic: str, count: int, partitions: int, first: int = 0) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for n in range(first, first + count):
        producer.produce(
            topic, b"v%d" % n, b"k%d" % n, partition=n % partitions, headers=[("n", b"%d" % n)]
        )
    assert producer.flush(30) == 0


class OnCommit:
    """A consumer interceptor counting committed offsets."""

    def __init__(self) -> None:
        self.committed: list[int] = []

    def on_commit(self, offsets: list[Any]) -> None:
        self.committed += [tp.offset for tp in offsets]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_sync_consumer_subscribes_reads_headers_commits_and_shares_partitions(
    protocol: str, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    produce(bootstrap, topic, 6, 2)
    config = group_config(bootstrap, protocol, **{"enable.auto.commit": False})
    first_hook = OnCommit()
    first = Consumer(config, interceptors=[first_hook])
    assigned: list[int] = []
    first.subscribe(
        [topic], on_assign=lambda _c, parts: assigned.extend(p.partition for p in parts)
    )
    got: list[Any] = []
    wait_for(
        lambda: got.extend(m for m in first.consume(10, 0.2) if m.error() is None) or len(got) >= 6
    )
    assert sorted(m.headers().last_value("n") for m in got) == [b"%d" % n for n in range(6)]
    assert sorted(assigned) == [0, 1]
    first.commit(asynchronous=False)
    assert sorted(first_hook.committed) == [3, 3]
    second = Consumer(config)
    second.subscribe([topic])
    try:

        def shared() -> bool:
            first.poll(0.1)
            second.poll(0.1)
            return len(first.assignment()) == 1 and len(second.assignment()) == 1

        wait_for(shared, what="the two members to hold one partition each")
    finally:
        second.close()
        first.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_aio_consumer_subscribes_and_reads_headers(
    protocol: str, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    produce(bootstrap, topic, 4, 2)

    async def main() -> list[bytes | None]:
        consumer = AIOConsumer(group_config(bootstrap, protocol))
        await consumer.subscribe([topic])
        got: list[Any] = []
        try:
            for _ in range(300):
                got += [m for m in await consumer.consume(10, 0.2) if m.error() is None]
                if len(got) >= 4:
                    break
        finally:
            await consumer.close()
        return sorted(m.headers().last_value("n") for m in got)

    assert asyncio.run(main()) == [b"0", b"1", b"2", b"3"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_processor_revoke_commits_what_was_handled_so_a_new_member_repeats_nothing(
    protocol: str, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    produce(bootstrap, topic, 20, 2)
    handled: dict[str, list[bytes]] = {"a": [], "b": []}
    lock = threading.Lock()

    def handler_of(name: str) -> Callable[[Any], None]:
        def handle(msg: Any) -> None:
            with lock:
                handled[name].append(msg.value())

        return handle

    config = group_config(bootstrap, protocol)
    first = Running(Processor(config, [topic], handler_of("a")))
    second: Running | None = None
    try:
        wait_for(lambda: len(handled["a"]) == 20, what="the first member to handle all 20")
        second = Running(Processor(config, [topic], handler_of("b")))
        produce(bootstrap, topic, 20, 2, first=20)
        wait_for(
            lambda: len(set(handled["a"]) | set(handled["b"])) == 40,
            what="every record handled by one member or the other",
        )
    finally:
        if second is not None:
            second.stop()
        first.stop()
    early = {b"v%d" % n for n in range(20)}
    assert not early & set(handled["b"]), "the second member repeated records already handled"
    assert len(handled["a"]) == len(set(handled["a"]))
