"""The broker is down at start, or dies mid-run: nothing blocks forever, every record is told.

These run on the reference broker (Apache Kafka; Tansu where Java or Maven is missing), one
per module, killed (SIGKILL, as a crash) and started again on the same storage by the tests
that need it down. Apache Kafka keeps its log, its topics and its idempotent producers' state
across that, so a consumer resumes where it was and every acknowledged record is still there.

The embedded Tansu broker, what ``kheaders demo`` and ``kheaders broker`` start, keeps
everything in memory: after a restart it is empty (topics, logs, committed offsets, producer
ids). What users meet there has a test of its own, explicitly on ``EmbeddedBroker``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from kheaders.broker import (
    ApacheKafka,
    DockerKafka,
    EmbeddedBroker,
    create_topic,
    docker_available,
)
from tests.faults.ledger import record_digest
from tests.support.brokers import LocalBroker, reference_local

pytestmark = pytest.mark.integration

MESSAGE_TIMEOUT_MS = 3000  # an idempotent producer may need ~1 s for its producer id

# A KRaft controller that comes back from SIGKILL still holds the dead broker's registration
# and refuses the new incarnation (DUPLICATE_BROKER_REGISTRATION) until that session expires:
# 9 s by default, so each kill-and-start took ~13 s here against ~4 s for a graceful
# restart. A short session makes it ~5 s; it stays well above what a busy machine's pauses
# make a heartbeat (every 0.5 s) late by.
QUICK_REREGISTRATION = {"broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500"}
KINDS = ("plain", "idempotent")


class Reports:
    """Delivery reports by record key: each record must be told exactly once."""

    def __init__(self) -> None:
        self.by_key: Counter[bytes] = Counter()
        self.errors: dict[bytes, KafkaError] = {}
        self.delivered: set[bytes] = set()
        self.offsets: dict[bytes, int] = {}
        self.digests: dict[bytes, bytes] = {}

    def __call__(self, err: KafkaError | None, msg: object) -> None:
        key: bytes = msg.key()  # type: ignore[attr-defined]
        self.by_key[key] += 1
        if err is None:
            self.delivered.add(key)
            self.offsets[key] = msg.offset()  # type: ignore[attr-defined]
        else:
            self.errors[key] = err

    def assert_each_told_once(self, keys: list[bytes]) -> None:
        assert set(self.by_key) == set(keys)
        assert max(self.by_key.values()) == 1
        assert not set(self.errors) & self.delivered


def _producer(bootstrap: str, *, idempotent: bool = False, **extra: object) -> Producer:
    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": idempotent,
            "message.timeout.ms": MESSAGE_TIMEOUT_MS,
            # reconnect quickly once the broker is back (the default backoff grows to 10 s,
            # longer than this test's message timeout)
            "reconnect.backoff.max.ms": 200,
            "log_level": 0,
            **extra,
        }
    )


def _drain(producer: Producer, timeout: float = 60.0, raised: list[str] | None = None) -> int:
    """flush() until nothing is left; a fatal error raises from flush, reports still follow.

    After a fatal error confluent-kafka 2.16 may call a delivery callback with the fatal
    KafkaException still set, so Python code in the callback fails with SystemError
    ("returned a result with an exception set", cf. confluent-kafka-python #150, #865).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if producer.flush(1.0) == 0:
                return 0
        except (KafkaException, SystemError) as exc:
            if raised is not None:
                raised.append(repr(exc))
    return len(producer)


def _produce(producer: Producer, topic: str, keys: list[bytes], reports: Reports) -> None:
    for key in keys:
        headers: list[tuple[str, bytes | None]] = [("k", key), ("bin", b"\x00\xff"), ("null", None)]
        reports.digests[key] = record_digest(key, b"value", headers)
        producer.produce(topic, b"value", key, headers=[*headers], on_delivery=reports)


def _until_delivered(
    producer: Producer,
    topic: str,
    prefix: bytes,
    reports: Reports,
    raised: list[str],
    timeout: float = 120.0,
) -> list[bytes]:
    """Send ``prefix0``, ``prefix1``, ... one at a time until one is delivered: the producer
    delivers (again), however long a busy machine takes to get there. Returns the keys sent;
    fails after ``timeout`` seconds without a delivery."""
    deadline = time.monotonic() + timeout
    keys: list[bytes] = []
    while not reports.delivered & set(keys):
        assert time.monotonic() < deadline, f"nothing delivered in {timeout} s: {raised}"
        keys.append(prefix + b"%d" % len(keys))
        _produce(producer, topic, keys[-1:], reports)
        assert _drain(producer, raised=raised) == 0
    return keys


def _consume_until(consumer: Consumer, wanted: set[bytes], timeout: float = 60.0) -> list[bytes]:
    """Keys read until every one of ``wanted`` is (or ``timeout`` seconds passed). Besides
    them the log may hold a record reported failed: sent, written, its answer lost (at least
    once), which a busy machine's timeout can make of any record."""
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while not wanted <= set(got) and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append(msg.key() or b"")
    return got


def _consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "reconnect.backoff.max.ms": 200,
            "log_level": 0,
        }
    )


def _restartable() -> LocalBroker:
    """A not yet started broker of the reference kind, quick to start again after a kill."""
    if reference_local() == "apache":
        return ApacheKafka(properties=QUICK_REREGISTRATION)
    return EmbeddedBroker()


@pytest.fixture(scope="module")
def module_broker() -> Iterator[LocalBroker]:
    """The module's broker, not started: the first test to need it running starts it (the
    broker-down-at-start test, first, needs it down and so saves a start)."""
    broker = _restartable()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def broker(module_broker: LocalBroker) -> LocalBroker:
    """The module's broker, running (a test that failed while it was down left it so)."""
    if not module_broker.running:
        module_broker.start()
    return module_broker


def test_broker_down_at_start_produce_returns_and_every_record_gets_its_error(
    module_broker: LocalBroker,
) -> None:
    broker = module_broker
    broker.kill()  # nothing listens on its port now (a no-op if it never started)
    producer = _producer(broker.bootstrap)
    reports = Reports()
    keys = [b"k%d" % i for i in range(50)]
    _produce(producer, "nowhere", keys, reports)  # returns at once: librdkafka queues
    assert producer.flush(0.05) == len(producer) == len(keys)  # flush(timeout) returns what is left
    assert _drain(producer) == 0
    reports.assert_each_told_once(keys)
    assert {e.code() for e in reports.errors.values()} <= {
        KafkaError._MSG_TIMED_OUT,
        KafkaError._TRANSPORT,
    }
    assert not reports.delivered
    broker.start()  # the same producer delivers once the broker is there
    topic = create_topic(broker.bootstrap, f"late-{time.monotonic_ns()}")
    producer.list_topics(topic, timeout=30)
    later, raised = Reports(), list[str]()
    sent = _until_delivered(producer, topic, b"late", later, raised)
    later.assert_each_told_once(sent)
    assert not raised


def _kill_mid_run(broker: LocalBroker, topics: dict[str, str]) -> dict[str, object]:
    """Per producer kind (plain, idempotent) with its own topic: 20 records delivered and
    consumed, the broker SIGKILLed, 20 records produced while it is down (each must fail, once),
    the broker started again. Returns what a test checks next."""
    producers = {
        kind: _producer(broker.bootstrap, idempotent=kind == "idempotent") for kind in topics
    }
    consumer = _consumer(broker.bootstrap, f"mid-{time.monotonic_ns()}")
    consumer.assign([TopicPartition(topic, 0, 0) for topic in topics.values()])
    before: dict[str, Reports] = {}
    raised: dict[str, list[str]] = {kind: [] for kind in topics}
    for kind, topic in topics.items():
        before[kind] = Reports()
        tag = kind.encode()  # keys are unique across the topics: one consumer reads both
        sent = _until_delivered(producers[kind], topic, tag + b"-first", before[kind], raised[kind])
        keys = [tag + b"-before%d" % i for i in range(20)]
        _produce(producers[kind], topic, keys, before[kind])
        assert _drain(producers[kind]) == 0
        before[kind].assert_each_told_once(sent + keys)
    delivered = set().union(*(r.delivered for r in before.values()))
    got = _consume_until(consumer, delivered)
    assert delivered <= set(got) <= set().union(*(r.by_key for r in before.values()))

    broker.kill()
    during: dict[str, Reports] = {kind: Reports() for kind in topics}
    for kind, topic in topics.items():
        keys = [kind.encode() + b"-during%d" % i for i in range(20)]
        _produce(producers[kind], topic, keys, during[kind])
        assert producers[kind].flush(0.05) > 0  # returns, with what is left
    for kind in topics:
        keys = [kind.encode() + b"-during%d" % i for i in range(20)]
        assert _drain(producers[kind], raised=raised[kind]) == 0
        during[kind].assert_each_told_once(keys)
        assert not during[kind].delivered  # nothing reached a dead broker
    polled = consumer.poll(0.3)  # polling an absent broker returns, raises nothing:
    assert polled is None or polled.error() is not None  # no record, at most an error event
    broker.start()
    return {
        "producers": producers,
        "consumer": consumer,
        "before": before,
        "during": during,
        "raised": raised,
    }


def test_broker_killed_mid_run_every_pending_record_gets_its_error_and_consumer_resumes(
    broker: LocalBroker,
) -> None:
    if not isinstance(broker, ApacheKafka):
        pytest.skip("the reference broker is Tansu here: see the EmbeddedBroker test below")
    suffix = time.monotonic_ns()
    topics = {kind: create_topic(broker.bootstrap, f"mid-{kind}-{suffix}") for kind in KINDS}
    run = _kill_mid_run(broker, topics)
    producers: dict[str, Producer] = run["producers"]  # type: ignore[assignment]
    consumer: Consumer = run["consumer"]  # type: ignore[assignment]
    before: dict[str, Reports] = run["before"]  # type: ignore[assignment]
    raised: dict[str, list[str]] = run["raised"]  # type: ignore[assignment]
    # Apache Kafka came back with its log, its topics and its producer state (a snapshot and
    # the log hold each idempotent producer's id, epoch and last sequences): the same
    # producers carry on, the idempotent one included, with no fatal error; the new records
    # follow the old ones in the log, so the consumer, whose position is past the old ones,
    # reads every new one. (Tansu, memory only, comes back empty: see the test below.)
    after: dict[str, Reports] = {}
    for kind, topic in topics.items():
        producers[kind].list_topics(topic, timeout=30)  # it sees the broker again
        after[kind] = Reports()
        tag = kind.encode()
        sent = _until_delivered(producers[kind], topic, tag + b"-after", after[kind], raised[kind])
        keys = [tag + b"-more%d" % i for i in range(25)]
        _produce(producers[kind], topic, keys, after[kind])
        assert _drain(producers[kind], raised=raised[kind]) == 0
        after[kind].assert_each_told_once(sent + keys)
        end_before = max(before[kind].offsets.values())
        assert min(after[kind].offsets.values()) > end_before  # the log went on, not over
    assert raised == {kind: [] for kind in topics}  # no fatal error, no producer replaced
    delivered = set().union(*(r.delivered for r in after.values()))
    got = _consume_until(consumer, delivered)
    consumer.close()
    print(
        "\n"
        + "; ".join(
            f"{kind}: {len(before[kind].delivered)} delivered before the kill,"
            f" {len(after[kind].delivered)} of {len(after[kind].by_key)} after"
            for kind in topics
        )
    )
    assert delivered <= set(got) <= set().union(*(r.by_key for r in after.values()))
    assert len(got) == len(set(got))  # each once


def test_embedded_broker_killed_mid_run_comes_back_empty() -> None:
    """What ``kheaders demo`` users meet: Tansu's memory storage forgets everything."""
    embedded = EmbeddedBroker().start()
    try:
        topics = {kind: create_topic(embedded.bootstrap, f"mid-{kind}") for kind in KINDS}
        run = _kill_mid_run(embedded, topics)
        producers: dict[str, Producer] = run["producers"]  # type: ignore[assignment]
        consumer: Consumer = run["consumer"]  # type: ignore[assignment]
        before: dict[str, Reports] = run["before"]  # type: ignore[assignment]
        raised: dict[str, list[str]] = run["raised"]  # type: ignore[assignment]
        for topic in topics.values():
            create_topic(embedded.bootstrap, topic)  # memory storage: the topic is gone
        # The restarted broker forgot the idempotent producer's id: librdkafka may fail it
        # fatally (UNKNOWN_PRODUCER_ID) on its next produce. Each record is still told once,
        # and the application makes a new producer.
        fatal = raised["idempotent"]
        producers["idempotent"].list_topics(topics["idempotent"], timeout=10)
        probe = Reports()
        try:
            _produce(producers["idempotent"], topics["idempotent"], [b"probe"], probe)
            _drain(producers["idempotent"], raised=fatal)
        except KafkaException as exc:  # produce() on a producer that failed fatally
            fatal.append(repr(exc) if exc.args[0].fatal() else "not fatal?")
        assert "not fatal?" not in fatal
        assert fatal or probe.delivered == {b"probe"}
        assert sum(probe.by_key.values()) <= 1
        if fatal:
            producers["idempotent"] = _producer(embedded.bootstrap, idempotent=True)
        assert not raised["plain"]
        # The restarted broker's log starts again at offset 0 while the consumer's position
        # is past the records it read: it resumes there, so records the new log put below it
        # are never fetched. A broker that loses its log cannot be resumed from without
        # loss; Apache Kafka keeps it (the test above).
        after: dict[str, Reports] = {}
        reachable: set[bytes] = set()
        for kind, topic in topics.items():
            position = max(before[kind].offsets.values()) + 1
            after[kind] = Reports()
            keys = [kind.encode() + b"-after%d" % i for i in range(25)]
            _produce(producers[kind], topic, keys, after[kind])
            assert _drain(producers[kind]) == 0
            after[kind].assert_each_told_once(keys)
            assert min(after[kind].offsets.values(), default=0) < position  # started over
            reachable |= {k for k, offset in after[kind].offsets.items() if offset >= position}
        got = _consume_until(consumer, reachable)
        consumer.close()
        assert reachable <= set(got) <= set().union(*(r.by_key for r in after.values()))
        print(f"\nTansu: fatal after the restart: {fatal}; reachable after it: {len(reachable)}")
    finally:
        embedded.stop()


# -- durability: a SIGKILLed Apache Kafka keeps every acknowledged record ---------------------


def _acknowledged_records_survive(bootstrap: str, restart: Callable[[], None]) -> None:
    """1,000 records acknowledged by an idempotent producer (acks=all), a broker crash and
    start, then every acknowledged record is read back from the log byte for byte."""
    topic = create_topic(bootstrap, f"durable-{time.monotonic_ns()}")
    producer = _producer(bootstrap, idempotent=True, **{"message.timeout.ms": 60_000})
    reports = Reports()
    keys = [b"d%d" % i for i in range(1000)]
    _produce(producer, topic, keys, reports)
    assert _drain(producer, 120) == 0
    reports.assert_each_told_once(keys)
    assert reports.delivered  # 60 s per record: on any machine most if not all are
    restart()
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"durable-{topic}", "log_level": 0}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: dict[bytes, bytes] = {}
    deadline = time.monotonic() + 120
    while len(got) < len(reports.delivered) and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            key = msg.key() or b""
            got[key] = record_digest(key, msg.value(), msg.headers())
    consumer.close()
    assert set(got) == reports.delivered
    assert all(got[key] == reports.digests[key] for key in got)  # byte for byte


def test_acknowledged_records_survive_a_kafka_restart(broker: LocalBroker) -> None:
    """SIGKILL, as a crash, then a start on the same storage.

    Apache Kafka acknowledges a write once it is in the OS page cache (no fsync by default:
    log.flush.interval.messages is unbounded); a killed JVM does not take the page cache with
    it, and the restarted broker recovers its unflushed segments, so every acknowledged record
    is there. Surviving the loss of the machine is replication's job, beyond one node.
    """
    if not isinstance(broker, ApacheKafka):
        pytest.skip(
            "the reference broker is Tansu here (Java or Maven missing): it keeps its log in"
            " memory, so a restart loses every record (see the EmbeddedBroker test above)"
        )

    def crash_and_start() -> None:
        broker.kill()
        broker.start()

    _acknowledged_records_survive(broker.bootstrap, crash_and_start)


@pytest.mark.docker
def test_acknowledged_records_survive_a_kafka_restart_in_docker() -> None:
    """The same on the apache/kafka image, restarted by Docker (SIGTERM, then SIGKILL)."""
    if not docker_available():
        pytest.skip("no Docker engine answers here (the ApacheKafka variant above runs)")
    kafka = DockerKafka().start()
    try:
        _acknowledged_records_survive(
            kafka.bootstrap,
            lambda: kafka._container.get_wrapped_container().restart(timeout=30),
        )
    finally:
        kafka.stop()
