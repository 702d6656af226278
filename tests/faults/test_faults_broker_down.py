"""The broker is down at start, or dies mid-run: nothing blocks forever, every record is told.

The embedded broker keeps everything in memory: after a restart it is empty (topics, logs,
committed offsets, producer ids). Durability of acknowledged records across a broker restart
therefore needs a real Apache Kafka: that test is at the end, marked ``docker``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from kheaders.broker import DockerKafka, EmbeddedBroker, create_topic, docker_available, free_port

pytestmark = pytest.mark.integration

MESSAGE_TIMEOUT_MS = 3000  # an idempotent producer may need ~1 s for its producer id


class Reports:
    """Delivery reports by record key: each record must be told exactly once."""

    def __init__(self) -> None:
        self.by_key: Counter[bytes] = Counter()
        self.errors: dict[bytes, KafkaError] = {}
        self.delivered: set[bytes] = set()
        self.offsets: dict[bytes, int] = {}

    def __call__(self, err: KafkaError | None, msg: object) -> None:
        key: bytes = msg.key()  # type: ignore[attr-defined]
        self.by_key[key] += 1
        if err is None:
            self.delivered.add(key)
            self.offsets[key] = msg.offset()  # type: ignore[attr-defined]
        else:
            self.errors[key] = err


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


def _drain(producer: Producer, timeout: float = 15.0, raised: list[str] | None = None) -> int:
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
        producer.produce(topic, b"value", key, headers=[("k", key)], on_delivery=reports)


@pytest.fixture
def broker() -> Iterator[EmbeddedBroker]:
    embedded = EmbeddedBroker().start()
    yield embedded
    embedded.stop()


def test_broker_down_at_start_produce_returns_and_every_record_gets_its_error() -> None:
    down = EmbeddedBroker(port=free_port())  # not started: nothing listens on its port
    producer = _producer(down.bootstrap)
    reports = Reports()
    keys = [b"k%d" % i for i in range(50)]
    _produce(producer, "nowhere", keys, reports)  # returns at once: librdkafka queues
    assert producer.flush(0.05) == len(producer) == len(keys)  # flush(timeout) returns what is left
    assert _drain(producer) == 0
    assert set(reports.by_key) == set(keys)
    assert max(reports.by_key.values()) == 1
    assert {e.code() for e in reports.errors.values()} <= {
        KafkaError._MSG_TIMED_OUT,
        KafkaError._TRANSPORT,
    }
    assert not reports.delivered
    down.start()  # the same producer delivers once the broker is there
    try:
        topic = create_topic(down.bootstrap, "late")
        producer.list_topics(topic, timeout=10)
        later = Reports()
        _produce(producer, topic, [b"a", b"b"], later)
        assert _drain(producer) == 0
        assert later.delivered == {b"a", b"b"}
    finally:
        down.stop()


def _consume(consumer: Consumer, want: int, timeout: float = 20.0) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append(msg.key())
    return got


@pytest.mark.parametrize("idempotent", [False, True], ids=["plain", "idempotent"])
def test_broker_killed_mid_run_every_pending_record_gets_its_error_and_consumer_resumes(
    broker: EmbeddedBroker, idempotent: bool
) -> None:
    topic = create_topic(broker.bootstrap, "mid")
    fatal_raised: list[str] = []
    producer = _producer(broker.bootstrap, idempotent=idempotent)
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "mid",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "reconnect.backoff.max.ms": 200,
            "log_level": 0,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    before = Reports()
    _produce(producer, topic, [b"before%d" % i for i in range(20)], before)
    assert _drain(producer) == 0
    assert len(before.delivered) == 20
    assert len(_consume(consumer, 20)) == 20

    broker.kill()
    during = Reports()
    keys = [b"during%d" % i for i in range(20)]
    _produce(producer, topic, keys, during)
    assert producer.flush(0.05) > 0  # returns, with what is left
    assert _drain(producer) == 0
    assert set(during.by_key) == set(keys)
    assert max(during.by_key.values()) == 1
    assert not during.delivered
    assert len(during.errors) == 20
    assert consumer.poll(0.3) is None  # polling an absent broker returns, raises nothing

    broker.start()
    topic = create_topic(broker.bootstrap, topic)  # memory storage: the topic is gone
    producer.list_topics(topic, timeout=10)  # wait until it sees the broker again
    after = Reports()
    if idempotent:
        # The restarted broker forgot this producer's id: librdkafka may fail fatally
        # (UNKNOWN_PRODUCER_ID) on the next produce. Each record is still told once, and the
        # application makes a new producer.
        probe = Reports()
        try:
            _produce(producer, topic, [b"probe"], probe)
            _drain(producer, raised=fatal_raised)
        except KafkaException as exc:  # produce() on a producer that already failed fatally
            fatal_raised.append(repr(exc) if exc.args[0].fatal() else "not fatal?")
        assert "not fatal?" not in fatal_raised
        assert fatal_raised or probe.delivered == {b"probe"}
        assert sum(probe.by_key.values()) <= 1
        if fatal_raised:
            producer = _producer(broker.bootstrap, idempotent=True)
    # The restarted broker's log starts again at offset 0 while the consumer's position is
    # 20: it resumes there, so records the new log put below 20 are never fetched. A broker
    # that loses its log cannot be resumed from without loss; real Kafka keeps it.
    _produce(producer, topic, [b"after%d" % i for i in range(25)], after)
    assert _drain(producer) == 0
    assert len(after.by_key) == 25
    assert max(after.by_key.values()) == 1
    reachable = {k for k, offset in after.offsets.items() if offset >= 20}
    got = _consume(consumer, len(reachable))
    consumer.close()
    print(
        f"\nidempotent={idempotent}: before {len(before.delivered)} delivered, during"
        f" {len(during.errors)} failed ({Counter(e.name() for e in during.errors.values())}),"
        f" after restart {len(after.delivered)} delivered, consumed {len(got)} (at offsets"
        f" >= the consumer's position); fatal: {fatal_raised}"
    )
    assert reachable
    assert set(got) == reachable


@pytest.mark.docker
def test_acknowledged_records_survive_a_kafka_restart() -> None:
    """Durability across a restart: only a real broker with a disk log can promise it."""
    if not docker_available():
        pytest.skip(
            "no Docker engine answers here: durability across a broker restart needs a real"
            " Apache Kafka (the embedded broker keeps its log in memory)"
        )
    kafka = DockerKafka().start()
    try:
        topic = create_topic(kafka.bootstrap, "durable")
        producer = _producer(kafka.bootstrap, idempotent=True, **{"message.timeout.ms": 30000})
        reports = Reports()
        _produce(producer, topic, [b"d%d" % i for i in range(1000)], reports)
        assert _drain(producer, 60) == 0
        assert len(reports.delivered) == 1000
        kafka._container.get_wrapped_container().restart(timeout=30)
        consumer = Consumer(
            {"bootstrap.servers": kafka.bootstrap, "group.id": "durable", "log_level": 0}
        )
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = _consume(consumer, 1000, timeout=120)
        consumer.close()
        assert set(got) == reports.delivered
    finally:
        kafka.stop()
