"""Two clusters for the mirror tests: the suite's broker (A) and a second one of its kind (B).

B is started with its own cluster id (:data:`CLUSTER_B`), so the two are two clusters to the
mirror: a second Apache Kafka, or a second Tansu where the run falls back to Tansu.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer as RawConsumer
from confluent_kafka import TopicPartition

from kheaders.broker import create_topic
from kheaders.mirror import Mirror
from tests.support.brokers import cluster_id, local_broker, topic_base

CLUSTER_B = cluster_id("kheaders-mirrorb")


@pytest.fixture(scope="session")
def cluster_b() -> Iterator[str]:
    """The second cluster's bootstrap servers (a broker with its own cluster id)."""
    broker = local_broker(cluster="kheaders-mirrorb").start()
    try:
        yield broker.bootstrap
    finally:
        broker.stop()


@pytest.fixture
def both_topics(
    bootstrap: str, cluster_b: str, request: pytest.FixtureRequest
) -> Callable[..., str]:
    """``both_topics(partitions=1, dlt=True) -> name``: the same fresh topic on A and B (and
    its ``-dlt`` dead-letter topic on both)."""
    base = topic_base(request.node.name, 50)

    def make(partitions: int = 1, dlt: bool = True) -> str:
        name = f"{base}-{uuid.uuid4().hex[:8]}"
        for cluster in (bootstrap, cluster_b):
            create_topic(cluster, name, partitions=partitions)
            if dlt:
                create_topic(cluster, name + "-dlt")
        return name

    return make


def fast_group() -> dict[str, object]:
    """Consumer settings that join a group on Tansu in about 3 s."""
    return {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}


def read_all(
    bootstrap: str, topic: str, expected: int, *, timeout: float = 60.0, quiet: float = 1.0
) -> list[Any]:
    """Every record of ``topic`` (all partitions, from the start): at least ``expected`` of
    them, then until ``quiet`` seconds pass without another (to see any extra copies)."""
    consumer = RawConsumer({"bootstrap.servers": bootstrap, "group.id": "read-all"})
    meta = consumer.list_topics(topic, timeout=10).topics[topic]
    consumer.assign([TopicPartition(topic, p, 0) for p in meta.partitions])
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    last = time.monotonic()
    try:
        while time.monotonic() < deadline:
            batch = consumer.consume(1000, 0.2)
            now = time.monotonic()
            for msg in batch:
                assert msg.error() is None, msg.error()
                out.append(msg)
                last = now
            if len(out) >= expected and now - last > quiet:
                break
    finally:
        consumer.close()
    return out


@contextlib.contextmanager
def running(mirror: Mirror) -> Iterator[Mirror]:
    """``mirror.run()`` in a thread for the block; stopped (drained, committed) after it."""
    failure: list[BaseException] = []

    def target() -> None:
        try:
            mirror.run()
        except BaseException as exc:  # handed to the test
            failure.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    try:
        yield mirror
    finally:
        mirror.stop()
        thread.join(60)
    assert not thread.is_alive(), "the mirror did not stop"
    if failure:
        raise failure[0]


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0, what: str = "") -> None:
    """Poll ``predicate`` until true; fail after ``timeout`` seconds naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")
