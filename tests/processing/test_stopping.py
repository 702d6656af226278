"""Stopping (issue 35.1): a stopped processor starts no record, and a restart after a clean
stop handles again nothing the stopped run handled (records settled past a slower worker's
travel in the commit's metadata)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import TopicPartition

from kheaders.processing import AIOProcessor, RetryTopics
from tests.processing.helpers import ALL, Running, config, make, produce, wait_for

pytestmark = pytest.mark.integration


def _keeps_commit_metadata(bootstrap: str, topic: str) -> bool:
    """Whether the broker returns the metadata a commit carried (Apache Kafka does; Tansu
    0.6 drops it, and then a restart may handle again what a slower worker held back)."""
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"probe-{uuid.uuid4().hex[:8]}"}
    )
    try:
        tp = TopicPartition(topic, 0, 0, metadata="probe")
        consumer.commit(offsets=[tp], asynchronous=False)
        (got,) = consumer.committed([TopicPartition(topic, 0)], timeout=10)
        return got.metadata == "probe"
    finally:
        consumer.close()


class Gate:
    """Handlers log their start, then wait until the test opens the gate."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.handled: list[int] = []
        self.opened = threading.Event()
        self._lock = threading.Lock()

    def start(self, msg: Any) -> None:
        with self._lock:
            self.started.append(msg.offset())

    def done(self, msg: Any) -> None:
        with self._lock:
            self.handled.append(msg.offset())


@pytest.mark.parametrize("driver", ALL)
def test_a_stop_during_slow_handlers_starts_no_other_record(
    bootstrap: str, topic_factory: Callable[..., str], driver: str
) -> None:
    topic = topic_factory()
    produce(bootstrap, topic, [{"key": f"k{i}".encode(), "value": b"v"} for i in range(40)])
    gate = Gate()
    concurrency = 4 if driver == "async-4" else 1

    def handle(msg: Any) -> None:
        gate.start(msg)
        gate.opened.wait(60)  # until the test opens the gate
        gate.done(msg)

    async def handle_async(msg: Any) -> None:
        gate.start(msg)
        while not gate.opened.is_set():  # until the test opens the gate
            await asyncio.sleep(0.01)
        gate.done(msg)

    chosen = handle if driver == "sync" else handle_async
    running = Running(make(driver, config(bootstrap), [topic], chosen, handle_signals=False))
    # every worker has a record in hand (and, above 1, more queued behind it)
    wait_for(lambda: len(gate.started) == concurrency, what="every worker busy")
    in_hand = list(gate.started)
    running.processor.stop()
    gate.opened.set()
    running.stop()
    assert gate.started == in_hand  # the handlers' own log: nothing started after stop()
    assert sorted(gate.handled) == sorted(in_hand)  # the records in hand were finished


def test_a_stop_between_in_place_attempts_makes_no_further_attempt(
    bootstrap: str, topic_factory: Callable[..., str], driver: str
) -> None:
    topic = topic_factory()
    produce(bootstrap, topic, [{"key": b"k", "value": b"flaky"}])
    attempts: list[int] = []

    def fail(msg: Any) -> None:
        attempts.append(msg.offset())
        raise ConnectionError("payment service unavailable")

    retry = RetryTopics(delays=[], in_place=3, in_place_delay=30)
    group = f"inplace-{driver}-{uuid.uuid4().hex[:6]}"
    running = Running(make(driver, config(bootstrap, group), [topic], fail, retry=retry))
    wait_for(lambda: len(attempts) == 1, what="the first attempt")
    running.stop()  # within the 30 s wait before the second attempt
    assert attempts == [0]
    reader = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (committed,) = reader.committed([TopicPartition(topic, 0)], timeout=10)
    finally:
        reader.close()
    assert committed.offset < 1  # neither handled nor dead-lettered: the next run tries it


@pytest.mark.parametrize("restart", ["sync", "async-4"])
def test_a_restart_after_a_clean_stop_handles_again_nothing_handled(
    bootstrap: str, topic_factory: Callable[..., str], restart: str
) -> None:
    """One slow key holds up its worker and the records queued behind it; the other workers
    handle records after them. After stop and restart (by either driver: both read the
    commit's metadata), each record is handled once."""
    topic = topic_factory()
    if not _keeps_commit_metadata(bootstrap, topic):
        pytest.skip("this broker drops commit metadata (Tansu 0.6): see docs/processing.md")
    records = [{"key": b"slow", "value": b"0"}, {"key": b"slow", "value": b"1"}]
    records += [{"key": f"k{i}".encode(), "value": str(i).encode()} for i in range(2, 80)]
    produce(bootstrap, topic, records)
    group = f"restart-{uuid.uuid4().hex[:8]}"
    gate = Gate()

    async def first(msg: Any) -> None:
        gate.start(msg)
        while msg.key() == b"slow" and not gate.opened.is_set():
            await asyncio.sleep(0.01)
        gate.done(msg)

    running = Running(AIOProcessor(config(bootstrap, group), [topic], first, concurrency=4))
    # offset 0 is in hand, offset 1 (same key) queued behind it: every record handled now
    # lies past an unhandled one
    wait_for(lambda: len(gate.handled) >= 10, what="the other workers to handle records")
    running.processor.stop()
    gate.opened.set()
    running.stop()
    first_run = list(gate.handled)
    assert 0 in first_run
    assert 1 not in first_run

    again: list[int] = []

    def second(msg: Any) -> None:
        again.append(msg.offset())

    running = Running(make(restart, config(bootstrap, group), [topic], second))
    try:
        wait_for(
            lambda: len(set(first_run) | set(again)) == len(records),
            what="every record handled by one run or the other",
        )
    finally:
        running.stop()
    assert not set(first_run) & set(again)  # nothing handled twice
    assert Counter(first_run + again) == Counter(range(len(records)))
