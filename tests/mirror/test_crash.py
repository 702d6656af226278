"""kill -9 of a running ``kheaders mirror`` and a restart: nothing lost, duplicates recognisable.

The first run commits nothing before it is killed (a long commit interval), so every record
it had copied is copied again by the restart: the target holds duplicates, each with the
same message id, and a Deduplicator leaves every record exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer as RawConsumer
from confluent_kafka import TopicPartition

from kheaders import Producer
from kheaders.interceptors.message_id import MessageIdInterceptor
from kheaders.mirror import MESSAGE_ID, Deduplicator
from tests.mirror.conftest import read_all, wait_for

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
N = 3000


def _mirror(source: str, target: str, topic: str, commit_interval: float) -> subprocess.Popen[str]:
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
    command = [
        sys.executable, "-m", "kheaders.cli", "mirror", "--source", source, "--target", target,
        "--topic", topic, "--group", f"crash-{topic}", "--max-in-flight", "100",
        "--commit-interval", str(commit_interval),
        "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500",
        "-X", "max.poll.interval.ms=6000",
    ]  # fmt: skip
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _count(bootstrap: str, topic: str) -> int:
    return len(read_all(bootstrap, topic, 0, timeout=2.0, quiet=0.2))


def test_kill_9_and_restart_lose_nothing_and_the_deduplicator_drops_the_copies(
    bootstrap: str, cluster_b: str, both_topics: Callable[..., str]
) -> None:
    topic = both_topics(partitions=2)
    producer = Producer({"bootstrap.servers": bootstrap}, interceptors=[MessageIdInterceptor()])

    def produce(first: int, count: int) -> None:
        for i in range(first, first + count):
            producer.produce(topic, value=b"%d" % i, key=b"k%d" % i)
        producer.flush(30)

    produce(0, N // 2)
    first = _mirror(bootstrap, cluster_b, topic, commit_interval=3600)
    try:
        wait_for(lambda: _count(cluster_b, topic) >= N // 4, what="the first run to copy")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    assert first.returncode == -signal.SIGKILL
    copied_before = _count(cluster_b, topic)
    produce(N // 2, N - N // 2)
    second = _mirror(bootstrap, cluster_b, topic, commit_interval=0.5)
    try:
        wait_for(
            lambda: _count(cluster_b, topic) >= N + copied_before,
            timeout=90,
            what="the restart to copy everything",
        )
    finally:
        second.send_signal(signal.SIGTERM)
        out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err[-2000:]
    producer.close()

    on_b = read_all(cluster_b, topic, N + copied_before)
    on_a = read_all(bootstrap, topic, N)
    sources = {m.value(): dict(m.headers())[MESSAGE_ID] for m in on_a}
    copies = [(m.value(), dict(m.headers())[MESSAGE_ID]) for m in on_b]
    assert len(copies) > N  # the first run's copies were sent again: nothing was committed
    assert set(copies) == set(sources.items())  # nothing lost, ids carried unchanged
    dedup = Deduplicator(max_ids=10 * N, window_seconds=600)
    kept = dedup.filter(on_b)
    assert sorted(m.value() for m in kept) == sorted(sources)
    assert dedup.duplicates == len(copies) - N
    assert "sent" in out  # the stopped run printed its counts
    # SIGTERM drained and committed every partition to its end: a restart copies nothing
    group = RawConsumer({"bootstrap.servers": bootstrap, "group.id": f"crash-{topic}"})
    committed = group.committed([TopicPartition(topic, p) for p in (0, 1)], timeout=10)
    group.close()
    ends = {p: 1 + max(m.offset() for m in on_a if m.partition() == p) for p in (0, 1)}
    assert {tp.partition: tp.offset for tp in committed} == ends
