"""Each interceptor hook side by side: the Java client's interceptors and kheaders' chain.

One JVM runs every Java scenario (interop/jvm Hooks.java) once per module; each test runs the
same scenario on kheaders and compares what the hooks saw, on which thread, and what reached
the broker. The table in docs/interceptors.md ("Side by side with the Java client") points
at these tests, one row each.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition

from kheaders import Consumer, Headers, Producer, ProducerRecord, RecordMetadata
from kheaders.broker import create_topic
from tests.interop.jvm import Event, Header, Jvm, decoded, events, read_partition0

pytestmark = pytest.mark.integration

JAVA_IO_THREAD = "kafka-producer-network-thread | interop-java"


@dataclass(frozen=True)
class JavaRun:
    send_topic: str
    consume_topic: str
    found: list[Event]

    def of(self, scenario: str, **match: object) -> list[Event]:
        return events(self.found, scenario=scenario, **match)


def read_all(bootstrap: str, topic: str, count: int) -> list[Message]:
    """The first ``count`` records of partition 0 (a plain reader, no interceptors)."""
    return read_partition0(bootstrap, topic, count)


def pairs(msg: Message) -> list[Header]:
    found = msg.headers()
    assert isinstance(found, Headers)
    return found.to_list()


@pytest.fixture(scope="module")
def java(jvm: Jvm, bootstrap: str) -> JavaRun:
    """Every Java scenario, run once; the consume scenario reads three records kheaders wrote."""
    stem = f"java-hooks-{uuid.uuid4().hex[:8]}"
    send_topic = create_topic(bootstrap, f"{stem}-send")
    consume_topic = create_topic(bootstrap, f"{stem}-consume")
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(3):
        producer.produce(consume_topic, b"v", str(i).encode())
    assert producer.flush(30) == 0
    found = jvm.run("hooks", bootstrap, send_topic, consume_topic, "3")
    return JavaRun(send_topic, consume_topic, found)


def java_wire(bootstrap: str, java: JavaRun) -> dict[bytes, list[Header]]:
    """What the Java scenarios wrote, by key (the scenario's name)."""
    delivered = [e for e in java.found if e["event"] == "delivered"]
    return {
        m.key(): pairs(m)  # type: ignore[misc]
        for m in read_all(bootstrap, java.send_topic, len(delivered))
    }


# -- the Python side's interceptors --------------------------------------------------------


class Seen:
    """Every call a kheaders interceptor got: (hook, interceptor, thread name, detail)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str, Any]] = []

    def add(self, hook: str, name: str, detail: Any) -> None:
        self.calls.append((hook, name, threading.current_thread().name, detail))

    def of(self, hook: str) -> list[tuple[str, str, Any]]:
        return [(name, thread, detail) for h, name, thread, detail in self.calls if h == hook]


class Stamp:
    """Reports each producer hook; adds ``seen.by: NAME`` in on_send (Java's A and B)."""

    def __init__(self, name: str, seen: Seen) -> None:
        self.name, self.seen = name, seen

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        self.seen.add("on_send", self.name, record.headers.to_list())
        record.headers.add("seen.by", self.name.encode())
        return record

    def on_acknowledgement(
        self, metadata: RecordMetadata, error: KafkaError | Exception | None, headers: Headers
    ) -> None:
        self.seen.add("on_ack", self.name, (metadata.partition, metadata.offset, error))


class SendRaiser(Stamp):
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        record.headers.add("half.done", b"\x01")
        raise RuntimeError("on_send failed")


class SendNone(Stamp):
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        return None  # type: ignore[return-value]  # what the test is about


class AckRaiser(Stamp):
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        return record

    def on_acknowledgement(
        self, metadata: RecordMetadata, error: KafkaError | Exception | None, headers: Headers
    ) -> None:
        super().on_acknowledgement(metadata, error, headers)
        raise RuntimeError("on_acknowledgement failed")


def produce_one(
    bootstrap: str, topic: str, key: bytes, chain: list[object], size: int = 16, **extra: Any
) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, **extra}, interceptors=chain)
    producer.produce(topic, bytes(size), key)
    assert producer.flush(30) == 0
    return producer


# -- producer hooks ------------------------------------------------------------------------


def test_on_send_runs_on_the_callers_thread_in_order_each_seeing_the_last_change(
    java: JavaRun, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    java_calls = java.of("chain", event="on_send")
    assert [(e["interceptor"], e["thread"], decoded(e["headers"])) for e in java_calls] == [
        ("a", "main", []),
        ("b", "main", [("seen.by", b"a")]),
    ]
    seen, topic = Seen(), topic_factory()
    produce_one(bootstrap, topic, b"chain", [Stamp("a", seen), Stamp("b", seen)])
    caller = threading.current_thread().name
    assert seen.of("on_send") == [("a", caller, []), ("b", caller, [("seen.by", b"a")])]

    stamped = [("seen.by", b"a"), ("seen.by", b"b")]
    assert java_wire(bootstrap, java)[b"chain"] == stamped
    assert [pairs(m) for m in read_all(bootstrap, topic, 1)] == [stamped]


def test_on_send_that_raises_is_skipped_and_the_next_sees_the_record_as_it_was_left(
    java: JavaRun, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    # Java: the exception is logged; the next interceptor gets the record object the failed
    # one was given, with what it changed in place before raising
    assert [
        (e["interceptor"], decoded(e["headers"])) for e in java.of("send-raises", event="on_send")
    ] == [("b", [("half.done", b"\x01")])]
    assert java.of("send-raises", event="delivered")
    seen, topic = Seen(), topic_factory()
    producer = produce_one(bootstrap, topic, b"x", [SendRaiser("raiser", seen), Stamp("b", seen)])
    assert [(n, d) for n, _, d in seen.of("on_send")] == [("b", [("half.done", b"\x01")])]
    assert producer.interceptors.errors["SendRaiser"] == 1

    expected = [("half.done", b"\x01"), ("seen.by", b"b")]
    assert java_wire(bootstrap, java)[b"send-raises"] == expected
    assert [pairs(m) for m in read_all(bootstrap, topic, 1)] == [expected]


def test_on_send_returning_nothing_loses_the_record_in_java_but_not_in_kheaders(
    java: JavaRun, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    # Java passes null on: the next interceptor fails on it, send() throws a
    # NullPointerException and every onAcknowledgement gets it; nothing is written
    assert java.of("send-null", event="send_raised")[0]["error"] == "NullPointerException"
    acks = java.of("send-null", event="on_ack")
    assert {(e["interceptor"], e["error"]) for e in acks} == {
        ("send-null", "NullPointerException"),
        ("b", "NullPointerException"),
    }
    assert b"send-null" not in java_wire(bootstrap, java)
    # kheaders: a result that is not a record is a failure of that interceptor; the chain
    # goes on with the last good record, which is sent
    seen, topic = Seen(), topic_factory()
    producer = produce_one(bootstrap, topic, b"x", [SendNone("none", seen), Stamp("b", seen)])
    assert producer.interceptors.errors["SendNone"] == 1
    assert [pairs(m) for m in read_all(bootstrap, topic, 1)] == [[("seen.by", b"b")]]


def test_on_acknowledgement_runs_on_javas_io_thread_and_on_the_pollers_thread_in_kheaders(
    java: JavaRun, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    acks = java.of("chain", event="on_ack")
    assert [(e["interceptor"], e["thread"], e["error"]) for e in acks] == [
        ("a", JAVA_IO_THREAD, None),
        ("b", JAVA_IO_THREAD, None),
    ]
    seen, topic = Seen(), topic_factory()
    producer = Producer(
        {"bootstrap.servers": bootstrap}, interceptors=[Stamp("a", seen), Stamp("b", seen)]
    )
    producer.produce(topic, b"v", b"k")
    left: list[int] = []
    flusher = threading.Thread(target=lambda: left.append(producer.flush(30)), name="flusher")
    flusher.start()
    flusher.join(60)
    assert left == [0]
    # kheaders: librdkafka's delivery report is handed over by poll()/flush(), so the hook
    # runs on whichever thread calls them, never on librdkafka's own threads
    assert [(n, t, d[2]) for n, t, d in seen.of("on_ack")] == [
        ("a", "flusher", None),
        ("b", "flusher", None),
    ]


def test_on_acknowledgement_that_raises_is_skipped_and_the_others_still_run(
    java: JavaRun, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    acks = java.of("ack-raises", event="on_ack")
    assert [e["interceptor"] for e in acks] == ["ack-raiser", "b"]
    assert java.of("ack-raises", event="delivered")
    seen, topic = Seen(), topic_factory()
    producer = produce_one(
        bootstrap, topic, b"x", [AckRaiser("ack-raiser", seen), Stamp("b", seen)]
    )
    assert [n for n, _, _ in seen.of("on_ack")] == ["ack-raiser", "b"]
    assert producer.interceptors.errors["AckRaiser"] == 1
    assert len(read_all(bootstrap, topic, 1)) == 1


def test_a_record_refused_before_sending_is_acknowledged_on_the_callers_thread_with_the_error(
    java: JavaRun, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    # Java: send() returns a failed future (RecordTooLargeException), onAcknowledgement runs
    # at once on the caller's thread with partition and offset -1
    assert [
        (e["thread"], e["partition"], e["offset"], e["error"])
        for e in java.of("too-large", event="on_ack")
    ] == [("main", -1, -1, "RecordTooLargeException")]
    assert java.of("too-large", event="failed")[0]["error"] == "RecordTooLargeException"
    # kheaders: the same acknowledgement, and produce() raises as confluent-kafka's does
    seen, topic = Seen(), topic_factory()
    producer = Producer(
        {"bootstrap.servers": bootstrap, "message.max.bytes": 1000},
        interceptors=[Stamp("a", seen)],
    )
    with pytest.raises(KafkaException) as raised:
        producer.produce(topic, bytes(4096), b"k")
    assert raised.value.args[0].code() == KafkaError.MSG_SIZE_TOO_LARGE
    [(name, thread, (partition, offset, error))] = seen.of("on_ack")
    assert (name, thread, partition, offset) == ("a", threading.current_thread().name, -1, -1)
    assert error is raised.value


# -- consumer hooks ------------------------------------------------------------------------


class Watch:
    """Reports on_consume and on_commit; drops offset 1 from the batch it returns."""

    def __init__(self, name: str, seen: Seen) -> None:
        self.name, self.seen = name, seen

    def on_consume(self, messages: list[Message]) -> list[Message]:
        self.seen.add("on_consume", self.name, [m.offset() for m in messages])
        return [m for m in messages if m.offset() != 1]

    def on_commit(self, offsets: list[TopicPartition]) -> None:
        self.seen.add(
            "on_commit", self.name, {f"{tp.topic}:{tp.partition}": tp.offset for tp in offsets}
        )


class ConsumeRaiser(Watch):
    def on_consume(self, messages: list[Message]) -> list[Message]:
        self.seen.add("on_consume", self.name, [m.offset() for m in messages])
        raise RuntimeError("on_consume failed")

    def on_commit(self, offsets: list[TopicPartition]) -> None:
        super().on_commit(offsets)
        raise RuntimeError("on_commit failed")


@pytest.fixture(scope="module")
def python_consume(java: JavaRun, bootstrap: str) -> tuple[Seen, list[int], Consumer]:
    """The consume scenario on kheaders: the three records Java read, the same interceptors."""
    seen = Seen()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"py-hooks-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
        },
        interceptors=[ConsumeRaiser("consume-raiser", seen), Watch("watch", seen)],
    )
    consumer.assign([TopicPartition(java.consume_topic, 0, 0)])
    app: list[int] = []
    deadline = time.monotonic() + 60
    while len(app) < 2 and time.monotonic() < deadline:
        app += [m.offset() for m in consumer.consume(10, 0.5) if m.error() is None]  # type: ignore[misc]
    consumer.commit(asynchronous=False)
    consumer.close()
    return seen, app, consumer


def test_on_consume_runs_in_poll_on_the_callers_thread_and_its_result_is_what_the_application_gets(
    java: JavaRun, python_consume: tuple[Seen, list[int], Consumer]
) -> None:
    calls = java.of("consume", event="on_consume")
    raiser = [e for e in calls if e["interceptor"] == "consume-raiser"]
    watch = [e for e in calls if e["interceptor"] == "watch"]
    assert {e["thread"] for e in calls} == {"main"}
    assert sum(e["count"] for e in raiser) == 3
    # the failed interceptor is skipped: the next one gets the batch it was given
    assert [r["offset"] for e in watch for r in e["records"]] == [0, 1, 2]
    assert [e["offset"] for e in java.of("consume", event="app_record")] == [0, 2]

    seen, app, _ = python_consume
    caller = threading.current_thread().name
    assert {t for _, t, _ in seen.of("on_consume")} == {caller}
    assert [o for n, _, offsets in seen.of("on_consume") if n == "watch" for o in offsets] == [
        0,
        1,
        2,
    ]
    assert app == [0, 2]


def test_on_commit_runs_after_a_successful_commit_and_its_exception_never_fails_the_commit(
    java: JavaRun, python_consume: tuple[Seen, list[int], Consumer]
) -> None:
    commits = java.of("consume", event="on_commit")
    expected = {f"{java.consume_topic}:0": 3}
    assert [(e["interceptor"], e["thread"], e["offsets"]) for e in commits] == [
        ("consume-raiser", "main", expected),
        ("watch", "main", expected),
    ]
    assert java.of("consume", event="committed")

    seen, _, consumer = python_consume
    caller = threading.current_thread().name
    assert seen.of("on_commit") == [
        ("consume-raiser", caller, expected),
        ("watch", caller, expected),
    ]
    assert consumer.interceptors.errors["ConsumeRaiser"] == 2  # on_consume and on_commit
