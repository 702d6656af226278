"""No record lost through a faulty network: a proxy cuts, stalls and delays broker traffic.

The broker (Apache Kafka, shared by the fault tests; Tansu where Java or Maven is missing)
advertises the proxy's port, so every client connection (bootstrap and after metadata)
crosses the proxy. The producer is idempotent; the consumer commits after
processing and is restarted mid-run from its committed offsets.
"""

from __future__ import annotations

import random
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka import Producer as RawProducer
from confluent_kafka.admin import AdminClient
from opentelemetry.sdk.trace import TracerProvider

from kheaders import Consumer, Headers, Producer
from kheaders.broker import ApacheKafka, EmbeddedBroker, create_topic, free_port, wait_for_broker
from kheaders.interceptors.client_id import ClientIdInterceptor
from kheaders.interceptors.logging import LoggingInterceptor
from kheaders.interceptors.tracing import TracingProducerInterceptor
from tests.faults.ledger import (
    AckLedger,
    CountingLogger,
    Ledger,
    record_digest,
    record_headers,
)
from tests.faults.proxy import (
    MESSAGE_TIMEOUT_MS,
    PARTITIONS,
    RATE,
    SEED,
    FaultProxy,
    wait_until,
)
from tests.support.brokers import LocalBroker

pytestmark = pytest.mark.integration

RECORDS = 100_000
BLACKOUT_AT = 93_000  # the proxy refuses all traffic for longer than message.timeout.ms here
BLACKOUT_RECORDS = 1_500


# -- the proxy itself ---------------------------------------------------------------------------


def _echo_server() -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=_echo, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return server, server.getsockname()[1]


def _echo(conn: socket.socket) -> None:
    with conn:
        while data := conn.recv(65536):
            conn.sendall(data)


@pytest.fixture
def echo_proxy() -> Iterator[FaultProxy]:
    server, port = _echo_server()
    with FaultProxy(("127.0.0.1", port), seed=1) as proxy:
        yield proxy
    server.close()


def _roundtrip(proxy: FaultProxy, payload: bytes, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=timeout) as sock:
        sock.sendall(payload)
        got = b""
        while len(got) < len(payload):
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            got += chunk
        return got


def test_proxy_forwards_bytes_unchanged(echo_proxy: FaultProxy) -> None:
    payload = random.Random(3).randbytes(300_000)
    assert _roundtrip(echo_proxy, payload) == payload
    stats = echo_proxy.stats
    assert wait_until(lambda: stats.bytes_up == len(payload) == stats.bytes_down, 5)


def test_proxy_cut_resets_open_connections(echo_proxy: FaultProxy) -> None:
    with socket.create_connection(("127.0.0.1", echo_proxy.port), timeout=5) as sock:
        sock.sendall(b"x")
        assert sock.recv(1) == b"x"
        assert echo_proxy.cut() == 1
        try:
            sock.sendall(b"y")
            got = sock.recv(1)
        except ConnectionResetError:
            got = b""
        assert got == b""  # reset, or closed: either way the connection is gone
    assert echo_proxy.stats.connections_cut == 1


def test_proxy_stall_holds_bytes_then_delivers_them(echo_proxy: FaultProxy) -> None:
    with socket.create_connection(("127.0.0.1", echo_proxy.port), timeout=5) as sock:
        # 2 s: the 0.15 s read below falls inside it even on a busy machine; the stall is
        # applied on the proxy's own thread, so wait until it is (not a fixed sleep)
        echo_proxy.stall(2000)
        assert wait_until(lambda: echo_proxy.stats.stalls == 1, 10)
        sock.sendall(b"held")
        sock.settimeout(0.15)
        with pytest.raises(TimeoutError):
            sock.recv(4)
        sock.settimeout(5)
        assert sock.recv(4) == b"held"


def test_proxy_refuse_closes_new_connections(echo_proxy: FaultProxy) -> None:
    echo_proxy.refuse(True)
    assert _roundtrip(echo_proxy, b"x", timeout=2) == b""
    echo_proxy.refuse(False)
    assert _roundtrip(echo_proxy, b"x") == b"x"
    assert echo_proxy.stats.refused == 1


def test_proxy_chaos_is_bounded_and_seeded() -> None:
    server, port = _echo_server()
    runs = []
    for _ in range(2):
        with FaultProxy(("127.0.0.1", port), seed=7) as proxy:
            proxy.start_chaos(interval_ms=(1, 3), max_faults=12, weights=(0, 1, 1))
            assert wait_until(proxy.chaos_done, 5)
            runs.append([f.split(":")[0] for f in proxy.stats.faults])
    server.close()
    assert len(runs[0]) == 12
    assert runs[0] == runs[1]


# -- the broker behind the proxy -----------------------------------------------------------------


def test_embedded_broker_advertises_the_proxy_port(
    proxied: tuple[LocalBroker, FaultProxy],
) -> None:
    broker, proxy = proxied
    assert broker.advertised == proxy.address != broker.bootstrap
    meta = AdminClient({"bootstrap.servers": proxy.address}).list_topics(timeout=10)
    assert [b.port for b in meta.brokers.values()] == [proxy.port]
    before = proxy.stats.connections
    topic = create_topic(proxy.address, "via-proxy")
    producer = RawProducer({"bootstrap.servers": proxy.address})
    producer.produce(topic, b"v")
    assert producer.flush(10) == 0
    assert proxy.stats.connections > before  # the client reconnected to the advertised port


def test_embedded_broker_advertised_port_defaults_to_its_port() -> None:
    broker = EmbeddedBroker(port=free_port())
    assert broker.advertised == broker.bootstrap


# -- 100k records through faults ----------------------------------------------------------------


class _Consumer(threading.Thread):
    """Consumes with commits after processing; restarts from committed offsets once."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        ledger: Ledger,
        restart_after: int,
        logger: object = None,
    ) -> None:
        super().__init__(daemon=True)
        self.logger = logger
        self.sample: Headers | None = None  # kheaders' consumers give Headers
        self.bootstrap, self.topic, self.ledger = bootstrap, topic, ledger
        self.restart_after = restart_after
        self.done = threading.Event()
        self.commit_failures = 0
        self.restarts = 0
        self.error: BaseException | None = None

    def _open(self) -> Consumer:
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"g-{self.topic}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "reconnect.backoff.max.ms": 500,
                "log_level": 0,
            },
            interceptors=[LoggingInterceptor("info", logger=self.logger)],
        )
        wanted = [TopicPartition(self.topic, p) for p in range(PARTITIONS)]
        committed = []
        deadline = time.monotonic() + 60
        while True:  # the proxy may cut this request too: retry until offsets are known
            try:
                committed = consumer.committed(wanted, timeout=5)
                break
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
        for tp in committed:
            if tp.offset < 0:
                tp.offset = 0  # nothing committed yet: the beginning
        consumer.assign(committed)
        return consumer

    def _commit(self, consumer: Consumer) -> None:
        try:
            consumer.commit(asynchronous=False)
        except KafkaException:
            self.commit_failures += 1  # next commit covers it; a restart re-reads, never loses

    def run(self) -> None:
        try:
            consumer = self._open()
            processed = 0
            while not self.done.is_set():
                batch = consumer.consume(2000, 0.2)
                for msg in batch:
                    if msg.error() is not None:
                        continue
                    self.ledger.consume(record_digest(msg.key(), msg.value(), msg.headers()))
                    self.sample = msg.headers()  # type: ignore[assignment]
                processed += len(batch)
                if batch:
                    self._commit(consumer)
                if not self.restarts and processed >= self.restart_after:
                    consumer.close()
                    self.restarts += 1
                    consumer = self._open()
            consumer.close()
        except BaseException as exc:  # surfaced by the test
            self.error = exc


def _produce_all(
    produce: Callable[[bytes, bytes, list[tuple[str, bytes | None]]], None],
    poll: Callable[[float], object],
    ledger: Ledger,
    proxy: FaultProxy,
    rng: random.Random,
) -> list[bytes]:
    """Records 0..RECORDS-1 at RATE through the chaos, with a blackout; returns the ids of the
    records produced during the blackout (each must fail: nothing could reach the broker)."""
    start = time.monotonic()
    blackout: list[bytes] = []
    i = 0
    while i < RECORDS:
        if i == BLACKOUT_AT:  # longer than message.timeout.ms: these records must fail
            proxy.refuse(True)
            proxy.cut()
            for j in range(i, i + BLACKOUT_RECORDS):
                blackout.append(_send(j, rng, produce, poll, ledger))
            # The blackout lasts until every record of it is reported: a condition, not a
            # sleep, so that none may slip through a busy machine's late timeout scan.
            deadline = time.monotonic() + 120
            while not all(key in ledger.reports for key in blackout):
                assert time.monotonic() < deadline, "blackout records not reported in 120 s"
                poll(0.1)
            proxy.refuse(False)
            i += BLACKOUT_RECORDS
            start = time.monotonic() - i / RATE
            continue
        _send(i, rng, produce, poll, ledger)
        i += 1
        if i % 500 == 0:
            ahead = i / RATE - (time.monotonic() - start)
            poll(max(ahead, 0))
    return blackout


def _until_acknowledged(
    first: int,
    rng: random.Random,
    produce: Callable[[bytes, bytes, list[tuple[str, bytes | None]]], None],
    poll: Callable[[float], object],
    ledger: Ledger,
    timeout: float = 120.0,
) -> int:
    """Send records ``first``, ``first + 1``, ... one at a time until one is acknowledged:
    the producer delivers (again). Each is an ordinary record of the ledger; returns the next
    free id. Fails after ``timeout`` seconds without an acknowledgement."""
    deadline = time.monotonic() + timeout
    i = first
    while True:
        key = _send(i, rng, produce, poll, ledger)
        i += 1
        while key not in ledger.reports:
            assert time.monotonic() < deadline, f"no record acknowledged in {timeout} s"
            poll(0.1)
        if key in ledger.acked:
            return i


def _send(
    i: int,
    rng: random.Random,
    produce: Callable[[bytes, bytes, list[tuple[str, bytes | None]]], None],
    poll: Callable[[float], object],
    ledger: Ledger,
) -> bytes:
    key = b"r%06d" % i
    value = rng.randbytes(rng.randrange(8, 64))
    headers = record_headers(i, rng)
    while True:
        try:
            produce(key, value, headers)
            return key
        except BufferError:
            poll(0.05)


def test_no_acknowledged_record_is_lost_through_cuts_stalls_and_delays(
    proxied_process: tuple[LocalBroker, FaultProxy],
) -> None:
    broker, proxy = proxied_process
    topic = create_topic(broker.bootstrap, f"faults-{uuid.uuid4().hex[:8]}", partitions=PARTITIONS)
    ledger = Ledger()
    acks = AckLedger(ledger)
    produce_log, consume_log = CountingLogger(), CountingLogger()
    provider = TracerProvider()

    def new_producer() -> Producer:
        return Producer(
            {
                "bootstrap.servers": proxy.address,
                "client.id": "faults-producer",
                "enable.idempotence": True,
                "linger.ms": 5,
                "message.timeout.ms": MESSAGE_TIMEOUT_MS,
                "reconnect.backoff.max.ms": 500,  # default grows to 10 s after repeated cuts
                "log_level": 0,
            },
            interceptors=[
                TracingProducerInterceptor("propagate", tracer_provider=provider),
                ClientIdInterceptor("faults-producer", app_name="faults"),
                LoggingInterceptor("info", logger=produce_log),
                acks,  # last: sees the headers exactly as they go to librdkafka
            ],
        )

    # Which broker fences: Tansu (the embedded broker, 0.6) answers an idempotent producer
    # whose records timed out PRODUCER_FENCED for every later record; the application then
    # replaces it, as it must after any fatal producer error, and every record of the old
    # producer is still reported. Apache Kafka is right not to: fencing is for a newer
    # instance of the same transactional.id, and an idempotent producer whose in-flight
    # records timed out bumps its epoch (KIP-360) and carries on; asserted below.
    state: dict[str, Any] = {"producer": new_producer(), "fenced": False}
    chain_errors: Counter[str] = Counter()
    replaced = 0

    def on_delivery(err: Any, msg: Any) -> None:
        ledger.report(msg.key(), err)
        if err is not None and (err.code() == KafkaError.PRODUCER_FENCED or err.fatal()):
            state["fenced"] = True

    def replace_if_fenced() -> None:
        nonlocal replaced
        if state["fenced"]:
            old: Producer = state["producer"]
            assert old.close(MESSAGE_TIMEOUT_MS / 1000 * 3)  # True: every record reported
            chain_errors.update(old.interceptors.errors)
            state["producer"], state["fenced"] = new_producer(), False
            replaced += 1

    def produce(key: bytes, value: bytes, headers: list[tuple[str, bytes | None]]) -> None:
        replace_if_fenced()
        state["producer"].produce(topic, value, key, headers=headers, on_delivery=on_delivery)

    def poll(timeout: float) -> object:
        return state["producer"].poll(timeout)

    consumer = _Consumer(
        proxy.address, topic, ledger, restart_after=RECORDS // 3, logger=consume_log
    )
    consumer.start()
    rng = random.Random(SEED)
    with provider.get_tracer("faults").start_as_current_span("produce-all"):
        # Faults hit a running producer: it has its producer id and metadata first (on a
        # fresh Kafka the first InitProducerId waits for the transaction log to load, and
        # cuts every few hundred milliseconds can keep a starting client from ever finishing
        # that dance; how long it takes is the machine's business, not this test's).
        next_id = _until_acknowledged(RECORDS, rng, produce, poll, ledger)
        proxy.start_chaos(interval_ms=(300, 900), max_faults=25, max_stall_ms=400)
        blackout = _produce_all(produce, poll, ledger, proxy, rng)
        deadline = time.monotonic() + 120
        while not proxy.chaos_done():  # every seeded fault happened, however fast we were
            assert time.monotonic() < deadline, "the chaos did not end in 120 s"
            poll(0.1)
        proxy.stop_chaos()
        # Through the faults the producer may lose records to timeouts (how many depends on
        # the machine's speed), never its ability to deliver: after them one gets through.
        next_id = _until_acknowledged(next_id, rng, produce, poll, ledger)
    producer: Producer = state["producer"]
    all_reported = producer.close(MESSAGE_TIMEOUT_MS / 1000 * 3)
    chain_errors.update(producer.interceptors.errors)
    assert all_reported, "records still queued after flush"
    assert wait_until(lambda: ledger.acked_consumed() == len(ledger.acked), 60)
    consumer.done.set()
    consumer.join(30)
    assert consumer.error is None, consumer.error
    summary = ledger.summary()
    stats = proxy.stats
    print(
        f"\nfaults: {stats.cuts} cuts ({stats.connections_cut} connections),"
        f" {stats.stalls} stalls, {stats.delays} delays, {stats.refused}"
        f" refused; consumer: {consumer.restarts} restart, {consumer.commit_failures}"
        f" failed commits\n{summary}\nfailures: {dict(ledger.failure_kinds())}"
        f"\nproducer log events {dict(produce_log.events)}; consumer log events"
        f" {dict(consume_log.events)}; chain errors {dict(chain_errors)};"
        f" producers replaced after fencing: {replaced};"
        f" queue-full retries {acks.queue_full}"
    )
    ledger.check()
    assert set(ledger.sent) == {b"r%06d" % i for i in range(next_id)}
    # every record reported to on_acknowledgement too, once, with the same outcome
    assert set(acks.acks) == set(ledger.sent)
    assert max(acks.acks.values()) == 1
    assert set(acks.ack_errors) == set(ledger.failed)
    assert set(blackout) <= set(ledger.failed)  # nothing crossed the blackout
    if isinstance(broker, ApacheKafka):
        assert replaced == 0  # Kafka fences no idempotent producer (see above)
    assert stats.cuts >= 3
    assert not any(chain_errors.values())
    # the interceptors' headers crossed the faults too: trace context and client id
    assert produce_log.events["kafka.send"] == next_id + acks.queue_full
    assert consume_log.events["kafka.consume"] >= summary["acknowledged"]
    assert consumer.sample is not None
    assert consumer.sample.last_value("client.id") == b"faults-producer"
    assert consumer.sample.last_value("traceparent") is not None
    wait_for_broker(broker.bootstrap, 5)
