"""The fault-proxy test of the sync clients, for the async ones: through cuts, stalls, delays and
a blackout longer than ``message.timeout.ms``, every record acknowledged is consumed byte for
byte, and every other record is reported failed, exactly once (to its future and to
``on_acknowledgement``). The proxy, the ledger and the interceptors are the sync test's own.
"""

from __future__ import annotations

import asyncio
import functools
import random
import uuid
from collections import Counter
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition
from opentelemetry.sdk.trace import TracerProvider

from kheaders import Headers
from kheaders.aio import AIOConsumer, AIOProducer
from kheaders.broker import ApacheKafka, create_topic, wait_for_broker
from kheaders.interceptors.client_id import ClientIdInterceptor
from kheaders.interceptors.logging import LoggingInterceptor
from kheaders.interceptors.tracing import TracingProducerInterceptor
from tests.faults.ledger import AckLedger, CountingLogger, Ledger, record_digest, record_headers
from tests.faults.proxy import MESSAGE_TIMEOUT_MS, PARTITIONS, RATE, SEED, FaultProxy
from tests.support.brokers import LocalBroker

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

RECORDS = 30_000  # the sync test's 100,000 is not needed to cross the same faults
BLACKOUT_AT = 24_000
BLACKOUT_RECORDS = 1_500


class _Consumer:
    """Consumes with commits after processing; restarts from committed offsets once."""

    def __init__(self, bootstrap: str, topic: str, ledger: Ledger, restart_after: int) -> None:
        self.bootstrap, self.topic, self.ledger = bootstrap, topic, ledger
        self.restart_after = restart_after
        self.done = asyncio.Event()
        self.commit_failures = 0
        self.restarts = 0
        self.sample: Headers | None = None  # kheaders' consumers give Headers

    async def _open(self) -> AIOConsumer:
        consumer = AIOConsumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"g-{self.topic}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "reconnect.backoff.max.ms": 500,
                "log_level": 0,
            }
        )
        wanted = [TopicPartition(self.topic, p) for p in range(PARTITIONS)]
        deadline = asyncio.get_running_loop().time() + 60
        while True:  # the proxy may cut this request too: retry until offsets are known
            try:
                committed = await consumer.committed(wanted, timeout=5)
                break
            except KafkaException:
                if asyncio.get_running_loop().time() > deadline:
                    raise
        for tp in committed:
            if tp.offset < 0:
                tp.offset = 0
        await consumer.assign(committed)
        return consumer

    async def run(self) -> None:
        consumer = await self._open()
        processed = 0
        while not self.done.is_set():
            batch = await consumer.consume(2000, 0.2)
            for msg in batch:
                if msg.error() is None:
                    self.ledger.consume(record_digest(msg.key(), msg.value(), msg.headers()))
                    self.sample = msg.headers()  # type: ignore[assignment]
            processed += len(batch)
            if batch:
                try:
                    await consumer.commit(asynchronous=False)
                except KafkaException:
                    self.commit_failures += 1  # the next commit covers it
            if not self.restarts and processed >= self.restart_after:
                await consumer.close()
                self.restarts += 1
                consumer = await self._open()
        await consumer.close()


async def test_async_clients_lose_no_acknowledged_record_through_faults(
    proxied_process: tuple[LocalBroker, FaultProxy],
) -> None:
    broker, proxy = proxied_process
    topic = create_topic(
        broker.bootstrap, f"aio-faults-{uuid.uuid4().hex[:8]}", partitions=PARTITIONS
    )
    ledger = Ledger()
    acks = AckLedger(ledger)
    produce_log = CountingLogger()
    provider = TracerProvider()
    outcomes: Counter[bytes] = Counter()  # futures resolved, per record

    def new_producer() -> AIOProducer:
        return AIOProducer(
            {
                "bootstrap.servers": proxy.address,
                "client.id": "aio-faults-producer",
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.timeout.ms": MESSAGE_TIMEOUT_MS,
                "reconnect.backoff.max.ms": 500,
                "log_level": 0,
            },
            interceptors=[
                TracingProducerInterceptor("propagate", tracer_provider=provider),
                ClientIdInterceptor("aio-faults-producer", app_name="faults"),
                LoggingInterceptor("info", logger=produce_log),
                acks,
            ],
        )

    state: dict[str, Any] = {"producer": new_producer(), "fenced": False}
    replaced = 0
    chain_errors: Counter[str] = Counter()

    def settled(key: bytes, fut: asyncio.Future[Message]) -> None:
        outcomes[key] += 1
        exc = fut.exception()
        err = exc.args[0] if isinstance(exc, KafkaException) else exc
        ledger.report(key, err)
        if isinstance(err, KafkaError) and (
            err.code() == KafkaError.PRODUCER_FENCED or err.fatal()
        ):
            state["fenced"] = True

    async def send(i: int, rng: random.Random) -> asyncio.Future[Message]:
        nonlocal replaced
        if state["fenced"]:  # Tansu fences an idempotent producer after timeouts (see below)
            old: AIOProducer = state["producer"]
            assert await old.close(MESSAGE_TIMEOUT_MS / 1000 * 3) == 0
            chain_errors.update(old.interceptors.errors)
            state["producer"], state["fenced"] = new_producer(), False
            replaced += 1
        key = b"r%06d" % i
        value = rng.randbytes(rng.randrange(8, 64))
        producer: AIOProducer = state["producer"]
        fut = await producer.produce(topic, value, key, headers=record_headers(i, rng))
        fut.add_done_callback(functools.partial(settled, key))
        return fut

    async def until_acknowledged(first: int, rng: random.Random, timeout: float = 120) -> int:
        """Send records ``first``, ``first + 1``, ... one at a time until one is acknowledged
        (the producer delivers, again); each is an ordinary record. Returns the next id."""
        deadline = loop.time() + timeout
        i = first
        while True:
            fut = await send(i, rng)
            i += 1
            done, _ = await asyncio.wait([fut], timeout=max(0.0, deadline - loop.time()))
            assert done, f"no record acknowledged in {timeout} s"
            if fut.exception() is None:
                return i

    consumer = _Consumer(proxy.address, topic, ledger, restart_after=RECORDS // 3)
    consuming = asyncio.create_task(consumer.run())
    loop = asyncio.get_running_loop()
    rng = random.Random(SEED)
    blackout: list[asyncio.Future[Message]] = []
    with provider.get_tracer("faults").start_as_current_span("produce-all"):
        # Faults hit a running producer, one with its producer id and metadata (see the sync
        # test: a client starting under cuts every few hundred milliseconds may take longer
        # than message.timeout.ms to get there, more so on a busy machine).
        next_id = await until_acknowledged(RECORDS, rng)
        proxy.start_chaos(interval_ms=(150, 450), max_faults=25, max_stall_ms=400)
        start = loop.time()
        i = 0
        while i < RECORDS:
            if i == BLACKOUT_AT:  # longer than message.timeout.ms: these records must fail
                proxy.refuse(True)
                proxy.cut()
                for j in range(i, i + BLACKOUT_RECORDS):
                    blackout.append(await send(j, rng))
                # until every one of them is told (a condition, not a sleep: a busy machine
                # may scan for timeouts late, and none may slip through then)
                _, pending = await asyncio.wait(blackout, timeout=120)
                assert not pending, "blackout records not reported in 120 s"
                proxy.refuse(False)
                i += BLACKOUT_RECORDS
                start = loop.time() - i / RATE
                continue
            await send(i, rng)
            i += 1
            if i % 500 == 0:
                await asyncio.sleep(max(i / RATE - (loop.time() - start), 0))
        deadline = loop.time() + 120
        while not proxy.chaos_done():  # every seeded fault happened, however fast we were
            assert loop.time() < deadline, "the chaos did not end in 120 s"
            await asyncio.sleep(0.1)
        proxy.stop_chaos()
        # Records may be lost to timeouts through the faults (how many depends on the
        # machine's speed), the ability to deliver never: after them one gets through.
        next_id = await until_acknowledged(next_id, rng)
    producer: AIOProducer = state["producer"]
    left = await producer.close(MESSAGE_TIMEOUT_MS / 1000 * 3)
    chain_errors.update(producer.interceptors.errors)
    assert left == 0, f"{left} records still queued after flush"
    deadline = loop.time() + 60
    while ledger.acked_consumed() < len(ledger.acked) and loop.time() < deadline:
        await asyncio.sleep(0.1)
    consumer.done.set()
    await asyncio.wait_for(consuming, 30)
    summary = ledger.summary()
    stats = proxy.stats
    print(
        f"\naio faults: {stats.cuts} cuts, {stats.stalls} stalls, {stats.delays} delays,"
        f" {stats.refused} refused; consumer: {consumer.restarts} restart,"
        f" {consumer.commit_failures} failed commits\n{summary}"
        f"\nfailures: {dict(ledger.failure_kinds())}; producers replaced: {replaced}"
    )
    ledger.check()
    assert set(ledger.sent) == {b"r%06d" % i for i in range(next_id)}
    assert set(outcomes) == set(ledger.sent)
    assert max(outcomes.values()) == 1
    assert set(acks.acks) == set(ledger.sent)
    assert max(acks.acks.values()) == 1
    assert set(acks.ack_errors) == set(ledger.failed)
    assert acks.queue_full == 0  # the async producer never surfaces BufferError
    assert all(fut.exception() is not None for fut in blackout)  # nothing crossed it
    # Tansu (the embedded broker, 0.6) fences an idempotent producer whose records timed
    # out (PRODUCER_FENCED for every later record) and the test replaces it as an
    # application must; that is how 560 of 30,000 came to be acknowledged on a busy machine.
    # Apache Kafka is right not to fence it: fencing is for a newer instance of the same
    # transactional.id, and an idempotent producer bumps its epoch after in-flight records
    # time out (KIP-360) and carries on with the same producer.
    if isinstance(broker, ApacheKafka):
        assert replaced == 0
    assert stats.cuts >= 2
    assert not any(chain_errors.values())
    assert produce_log.events["kafka.send"] == next_id
    assert consumer.sample is not None
    assert consumer.sample.last_value("client.id") == b"aio-faults-producer"
    assert consumer.sample.last_value("traceparent") is not None
    wait_for_broker(broker.bootstrap, 5)
