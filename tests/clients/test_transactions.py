"""Transactions through kheaders, sync and asyncio, on the reference broker (Apache Kafka).

What the Java client does, and kheaders keeps: ``onSend`` runs once per record as it is sent
inside the transaction; ``onAcknowledgement`` runs once per record when its write is
acknowledged, which happens before the transaction ends, so a record flushed and then aborted
is acknowledged without an error; a record still queued when the transaction is aborted is
acknowledged once, with the error (librdkafka purges it: ``_PURGE_QUEUE``; Java fails the
batch with ``TransactionAbortedException``). A ``read_committed`` consumer never sees an
aborted record; a ``read_uncommitted`` one does (they were written).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, TopicPartition

from kheaders import Headers, Producer, ProducerRecord, RecordMetadata
from kheaders.aio import AIOProducer
from kheaders.broker import Broker

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _aborts_are_hidden_by_the_broker(broker: Broker) -> None:
    if broker.kind == "embedded":
        pytest.skip(
            "Tansu serves aborted transactional records even to read_committed consumers"
            " (FIELD-NOTES): transactions are tested where Apache Kafka runs"
        )


class Hooks:
    """A producer interceptor recording every hook call, and stamping a header on send."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.acks: list[tuple[bytes, int | None, Any]] = []

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        assert isinstance(record.value, bytes)
        self.sent.append(record.value)
        record.headers.add("stamped", b"yes")
        return record

    def on_acknowledgement(
        self, metadata: RecordMetadata, error: KafkaError | Exception | None, headers: Headers
    ) -> None:
        value = headers.last_value("n")
        assert value is not None
        code = error.code() if isinstance(error, KafkaError) else error
        self.acks.append((value, metadata.offset if error is None else None, code))


def read(bootstrap: str, topic: str, isolation: str, want: int) -> list[Any]:
    """Every record of ``topic`` partition 0 visible at ``isolation`` (reads to the end)."""
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{uuid.uuid4().hex[:6]}",
            "isolation.level": isolation,
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    out: list[Any] = []
    try:
        for _ in range(300):
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error() is None:
                out.append(msg)
            elif msg.error().code() == KafkaError._PARTITION_EOF and len(out) >= want:
                break
    finally:
        consumer.close()
    return out


class SyncDriver:
    """The transactional calls of ``kheaders.Producer``."""

    def __init__(self, config: dict[str, Any], hooks: Hooks) -> None:
        self.producer = Producer(config, interceptors=[hooks])

    def run(self, name: str, *args: Any) -> Any:
        method: Callable[..., Any] = getattr(self.producer, name)
        return method(*args)

    def produce(self, topic: str, n: int) -> None:
        self.producer.produce(topic, b"v%d" % n, headers=[("n", b"%d" % n), ("dup", b"a")])

    def settle(self, done: Callable[[], bool]) -> None:
        """Serve delivery reports until ``done()`` (or 30 s)."""
        for _ in range(300):
            if done():
                return
            self.producer.poll(0.1)

    def close(self) -> None:
        self.producer.flush(15)


class AsyncDriver:
    """The same calls on ``kheaders.aio.AIOProducer``, each run to completion on a loop."""

    def __init__(self, config: dict[str, Any], hooks: Hooks) -> None:
        self.loop = asyncio.new_event_loop()
        self.futures: list[Any] = []
        self.producer = self.loop.run_until_complete(self._make(config, hooks))

    @staticmethod
    async def _make(config: dict[str, Any], hooks: Hooks) -> AIOProducer:
        return AIOProducer(config, interceptors=[hooks])

    def run(self, name: str, *args: Any) -> Any:
        method: Callable[..., Any] = getattr(self.producer, name)
        return self.loop.run_until_complete(method(*args))

    def produce(self, topic: str, n: int) -> None:
        async def send() -> None:
            future = await self.producer.produce(
                topic, b"v%d" % n, headers=[("n", b"%d" % n), ("dup", b"a")]
            )
            self.futures.append(future)

        self.loop.run_until_complete(send())

    def settle(self, done: Callable[[], bool]) -> None:
        """Let the loop run reports until ``done()`` (or 30 s)."""

        async def wait() -> None:
            for _ in range(300):
                if done():
                    return
                await asyncio.sleep(0.1)

        self.loop.run_until_complete(wait())

    def close(self) -> None:
        async def finish() -> None:
            await asyncio.gather(*self.futures, return_exceptions=True)
            await self.producer.close()

        self.loop.run_until_complete(finish())
        self.loop.close()


@pytest.fixture(params=["sync", "async"])
def make_driver(
    request: pytest.FixtureRequest, bootstrap: str
) -> Iterator[Callable[[Hooks, dict[str, Any]], Any]]:
    made: list[Any] = []

    def make(hooks: Hooks, extra: dict[str, Any]) -> Any:
        config = {
            "bootstrap.servers": bootstrap,
            "transactional.id": f"kh-tx-{uuid.uuid4().hex[:8]}",
            **extra,
        }
        driver = (SyncDriver if request.param == "sync" else AsyncDriver)(config, hooks)
        made.append(driver)
        return driver

    yield make
    for driver in made:
        driver.close()


def test_committed_records_arrive_with_headers_and_each_hook_ran_once(
    make_driver: Callable[[Hooks, dict[str, Any]], Any], bootstrap: str, topic: str
) -> None:
    hooks = Hooks()
    driver = make_driver(hooks, {})
    driver.run("init_transactions", 30)
    driver.run("begin_transaction")
    for n in range(5):
        driver.produce(topic, n)
    driver.run("commit_transaction", 30)
    assert hooks.sent == [b"v%d" % n for n in range(5)]
    assert sorted(value for value, _, _ in hooks.acks) == [b"%d" % n for n in range(5)]
    assert all(offset is not None and code is None for _, offset, code in hooks.acks)
    records = read(bootstrap, topic, "read_committed", 5)
    assert [(m.value(), m.headers()) for m in records] == [
        (b"v%d" % n, [("n", b"%d" % n), ("dup", b"a"), ("stamped", b"yes")]) for n in range(5)
    ]


def test_flushed_then_aborted_records_are_acknowledged_and_never_read_committed(
    make_driver: Callable[[Hooks, dict[str, Any]], Any], bootstrap: str, topic: str
) -> None:
    hooks = Hooks()
    driver = make_driver(hooks, {})
    driver.run("init_transactions", 30)
    driver.run("begin_transaction")
    for n in range(3):
        driver.produce(topic, n)
    driver.run("flush", 30)  # written to the log, inside the open transaction
    driver.run("abort_transaction", 30)
    driver.run("begin_transaction")
    driver.produce(topic, 3)
    driver.run("commit_transaction", 30)
    assert hooks.sent == [b"v0", b"v1", b"v2", b"v3"]
    # As in Java: the write was acknowledged before the abort, once per record, no error.
    assert sorted(value for value, _, _ in hooks.acks) == [b"0", b"1", b"2", b"3"]
    assert all(code is None for _, _, code in hooks.acks)
    assert [m.value() for m in read(bootstrap, topic, "read_committed", 1)] == [b"v3"]
    uncommitted = read(bootstrap, topic, "read_uncommitted", 4)
    assert [m.value() for m in uncommitted] == [b"v0", b"v1", b"v2", b"v3"]


def test_records_still_queued_at_abort_are_acknowledged_once_with_the_error(
    make_driver: Callable[[Hooks, dict[str, Any]], Any], bootstrap: str, topic: str
) -> None:
    hooks = Hooks()
    driver = make_driver(hooks, {"linger.ms": 30_000})  # nothing leaves before the abort
    driver.run("init_transactions", 30)
    driver.run("begin_transaction")
    for n in range(3):
        driver.produce(topic, n)
    driver.run("abort_transaction", 30)
    driver.settle(lambda: len(hooks.acks) >= 3)
    assert hooks.sent == [b"v0", b"v1", b"v2"]
    assert sorted(value for value, _, _ in hooks.acks) == [b"0", b"1", b"2"]
    assert {code for _, _, code in hooks.acks} == {KafkaError._PURGE_QUEUE}
    driver.run("begin_transaction")
    driver.produce(topic, 9)
    driver.run("commit_transaction", 30)
    assert [m.value() for m in read(bootstrap, topic, "read_uncommitted", 1)] == [b"v9"]
