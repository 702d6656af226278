"""Non-blocking retries on a real broker: 1,000 records, 5% always failing, sync and async."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

from kheaders.broker import create_topic
from kheaders.deadletter import spring as sh
from kheaders.processing import RetryTopics
from tests.processing.helpers import Running, config, make, produce, read_all, wait_for

pytestmark = pytest.mark.integration

N = 1000
DELAYS = (0.2, 0.4)


class AlwaysFails(Exception):
    """The handler's failure for the poison records."""


def _records(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        headers: list[tuple[str, bytes | None]] = [
            ("trace", f"t-{i}".encode()),
            ("dup", b"first"),
            ("null", None),
            ("dup", b"second"),
            ("bin", bytes([0, 255, i % 256])),
        ]
        out.append({"key": f"k{i % 97}".encode(), "value": f"v{i}".encode(), "headers": headers})
    return out


def _poison(value: bytes) -> bool:
    return int(value[1:]) % 20 == 7  # 5%


@pytest.mark.parametrize("driver", ["sync", "async-4"])  # (async: the same engine)
def test_each_failing_record_is_tried_once_per_delay_then_dead_lettered_byte_for_byte(
    bootstrap: str, topic_factory: Callable[..., str], driver: str
) -> None:
    topic = topic_factory(partitions=3)
    sent = produce(bootstrap, topic, _records(N))
    calls: dict[bytes, list[tuple[str, int, int | None]]] = defaultdict(list)
    early: list[str] = []
    lock = threading.Lock()

    def handle(msg: Any) -> None:
        now = time.time_ns() // 1_000_000
        due = sh.decode_timestamp(msg.headers().last_value(sh.BACKOFF_TIMESTAMP))
        if msg.topic() != topic and (due is None or now < due):
            early.append(f"{msg.topic()}@{msg.offset()} at {now} due {due}")
        with lock:
            calls[msg.value()].append((msg.topic(), msg.offset(), due))
        if _poison(msg.value()):
            raise AlwaysFails(f"record {msg.value()!r} cannot be handled")

    group = f"retries-{driver}"
    proc = make(driver, config(bootstrap, group), [topic], handle, retry=RetryTopics(delays=DELAYS))
    poison = [r for r in sent if _poison(r.value or b"")]
    running = Running(proc)
    try:
        wait_for(
            lambda: len(calls) == N and all(len(calls[r.value or b""]) == 3 for r in poison),
            what="every record handled, each poison record three times",
        )
        dead = read_all(bootstrap, f"{topic}-dlt", len(poison))
    finally:
        running.stop()
    assert early == []
    good = [r for r in sent if not _poison(r.value or b"")]
    assert all(len(calls[r.value or b""]) == 1 for r in good)
    for r in poison:
        hops = [t for t, _, _ in calls[r.value or b""]]
        assert hops == [topic, f"{topic}-retry-200", f"{topic}-retry-400"]
    assert sorted(d.value or b"" for d in dead) == sorted(r.value or b"" for r in poison)
    by_value = {r.value: r for r in sent}
    for d in dead:
        original = by_value[d.value]
        assert d.key == original.key
        assert d.partition == original.partition  # the same partition number
        assert d.timestamp[1] >= original.timestamp[1]  # stamped when sent (as Spring)
        assert d.headers[: len(original.headers)] == original.headers  # order, dups, None
        names = [k for k, _ in d.headers[len(original.headers) :]]
        once = [n for n in names if n not in sh.RETRY_HEADERS]
        assert len(set(once)) == len(once)  # the origin and the failure: each added once
        assert [n for n in names if n in sh.RETRY_HEADERS] == [*sh.RETRY_HEADERS] * 3  # per hop
        added = dict(d.headers[len(original.headers) :])  # the last value of each
        assert added[sh.ORIGINAL_TOPIC] == topic.encode()
        assert added[sh.ORIGINAL_PARTITION] == original.partition.to_bytes(4, "big")
        assert added[sh.ORIGINAL_OFFSET] == original.offset.to_bytes(8, "big")
        assert added[sh.ORIGINAL_TIMESTAMP] == original.timestamp[1].to_bytes(8, "big")
        assert added[sh.ORIGINAL_TIMESTAMP_TYPE] == b"CreateTime"
        assert added[sh.ORIGINAL_CONSUMER_GROUP] == group.encode()
        assert added[sh.EXCEPTION_FQCN] == f"{__name__}.AlwaysFails".encode()
        assert added[sh.EXCEPTION_MESSAGE] == f"record {d.value!r} cannot be handled".encode()
        assert b"AlwaysFails" in (added[sh.EXCEPTION_STACKTRACE] or b"")
        assert added[sh.ATTEMPTS] == (4).to_bytes(4, "big")
        ts = original.timestamp[1]
        assert added[sh.ORIGINAL_TIMESTAMP_RETRY] == ts.to_bytes(
            ts.bit_length() // 8 + 1, "big", signed=True
        )


def test_records_flow_while_a_retry_waits_for_its_due_time(
    bootstrap: str, topic_factory: Callable[..., str], driver: str
) -> None:
    topic = topic_factory(partitions=1)
    handled: list[tuple[str, bytes]] = []

    def handle(msg: Any) -> None:
        handled.append((msg.topic(), msg.value()))
        if msg.value() == b"poison":
            raise AlwaysFails("poison")

    proc = make(driver, config(bootstrap), [topic], handle, retry=RetryTopics(delays=[60]))
    running = Running(proc)
    try:
        produce(bootstrap, topic, [{"key": b"a", "value": b"poison"}])
        wait_for(lambda: (topic, b"poison") in handled, what="the poison record")
        later = [{"key": b"a", "value": f"after-{i}".encode()} for i in range(50)]
        produce(bootstrap, topic, later)
        wait_for(lambda: len(handled) == 51, what="the records after the failure")
        retry_read = read_all(bootstrap, f"{topic}-retry", 1)
        assert len(retry_read) == 1  # published, and read by the processor (paused) meanwhile
    finally:
        running.stop()
    assert handled[0] == (topic, b"poison")
    assert [v for _, v in handled[1:]] == [f"after-{i}".encode() for i in range(50)]
    assert all(t == topic for t, _ in handled)  # the retry, due in 60 s, never ran


def test_a_retry_record_written_by_spring_is_honoured(
    bootstrap: str, topic_factory: Callable[..., str], driver: str
) -> None:
    topic = topic_factory(partitions=2)
    retry = RetryTopics(delays=DELAYS)
    first, second = retry.retry_topic(topic, 2), retry.retry_topic(topic, 3)
    for name in (first, second, f"{topic}-dlt"):
        create_topic(bootstrap, name, partitions=2)
    due = time.time_ns() // 1_000_000 + 1500
    origin = [
        (sh.ORIGINAL_TOPIC, topic.encode()),
        (sh.ORIGINAL_PARTITION, (1).to_bytes(4, "big")),
        (sh.ORIGINAL_OFFSET, (42).to_bytes(8, "big")),
        (sh.ORIGINAL_TIMESTAMP, (1_700_000_000_000).to_bytes(8, "big")),
        (sh.ORIGINAL_TIMESTAMP_TYPE, b"CreateTime"),
        (sh.EXCEPTION_FQCN, b"java.lang.IllegalStateException"),
        (sh.ORIGINAL_TIMESTAMP_RETRY, (1_700_000_000_000).to_bytes(6, "big", signed=True)),
    ]
    produce(
        bootstrap,
        second,
        [  # its last attempt (3 of 3), due in 1.5 s: a failure goes to the dead-letter topic
            {
                "key": b"j",
                "value": b"java-last",
                "partition": 1,
                "headers": [
                    ("app", b"x"),
                    *origin,
                    (sh.ATTEMPTS, (3).to_bytes(4, "big")),
                    (sh.BACKOFF_TIMESTAMP, due.to_bytes(6, "big", signed=True)),
                ],
            }
        ],
    )
    produce(
        bootstrap,
        first,
        [  # an older Spring's one-byte attempts: 2, so a failure goes to the second topic
            {
                "key": b"j",
                "value": b"java-legacy",
                "partition": 1,
                "headers": [
                    *origin,
                    (sh.ATTEMPTS, b"\x02"),
                    (sh.BACKOFF_TIMESTAMP, due.to_bytes(6, "big", signed=True)),
                ],
            }
        ],
    )
    seen: list[tuple[bytes, int]] = []

    def handle(msg: Any) -> None:
        seen.append((msg.value(), time.time_ns() // 1_000_000))
        raise AlwaysFails("still failing")

    running = Running(make(driver, config(bootstrap), [topic], handle, retry=retry))
    try:
        dead = read_all(bootstrap, f"{topic}-dlt", 2)
        onward = read_all(bootstrap, second, 2)
    finally:
        running.stop()
    assert seen
    assert all(at >= due for _, at in seen)
    assert sorted(d.value or b"" for d in dead) == [b"java-last", b"java-legacy"]
    last = next(d for d in dead if d.value == b"java-last")
    assert last.partition == 1
    assert [v for v, _ in seen].count(b"java-last") == 1  # its last attempt: no more retries
    dlt = dict(last.headers)
    assert dlt[sh.ATTEMPTS] == (4).to_bytes(4, "big")
    assert dlt[sh.ORIGINAL_OFFSET] == (42).to_bytes(8, "big")  # kept from the first failure
    assert dlt[sh.EXCEPTION_FQCN] == f"{__name__}.AlwaysFails".encode()  # replaced
    assert dlt[sh.ORIGINAL_TIMESTAMP_RETRY] == origin[-1][1]
    assert [h for h in last.headers if h[0] == sh.ORIGINAL_TOPIC] == [origin[0]]
    moved = [r for r in onward if r.value == b"java-legacy"]
    assert len(moved) == 1
    assert moved[0].last(sh.ATTEMPTS) == (3).to_bytes(4, "big")


WEEK_MS = 7 * 24 * 3600 * 1000


@pytest.mark.parametrize("keep", [False, True])
def test_retry_and_dead_letter_records_are_stamped_when_sent_unless_told_to_keep(
    bootstrap: str, topic_factory: Callable[..., str], driver: str, keep: bool
) -> None:
    """Issue 32.2: as Spring's DeadLetterPublishingRecoverer, a retry or dead-letter record
    gets the producer's send time (a week-old record's dead letter does not fall out of a
    topic with a week's retention); the original's time is in kafka_original-timestamp.
    ``keep_timestamps=True`` keeps the original's."""
    topic = topic_factory()
    old = time.time_ns() // 1_000_000 - WEEK_MS
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, key=b"k", value=b"week-old", timestamp=old)
    assert producer.flush(30) == 0
    before = time.time_ns() // 1_000_000

    def handle(msg: Any) -> None:
        raise AlwaysFails("no")

    running = Running(
        make(
            driver,
            config(bootstrap),
            [topic],
            handle,
            retry=RetryTopics(delays=[0.1]),
            keep_timestamps=keep,
        )
    )
    try:
        dead = read_all(bootstrap, f"{topic}-dlt", 1)
        retried = read_all(bootstrap, f"{topic}-retry", 1)
    finally:
        running.stop()
    for record in (retried[0], dead[0]):
        assert record.last(sh.ORIGINAL_TIMESTAMP) == old.to_bytes(8, "big")
        if keep:
            assert record.timestamp == (confluent_kafka.TIMESTAMP_CREATE_TIME, old)
        else:
            assert record.timestamp[0] == confluent_kafka.TIMESTAMP_CREATE_TIME
            assert record.timestamp[1] >= before  # sent after the record was produced
