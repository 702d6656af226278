"""A processing service killed with SIGKILL mid-run loses nothing when restarted; SIGTERM
stops it cleanly with everything handled committed; a rebalance commits what was handled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import TopicPartition

from kheaders.processing import Processor
from tests.processing.helpers import Running, config, produce, read_all, wait_for

pytestmark = pytest.mark.integration

N = 1000
ROOT = Path(__file__).resolve().parents[2]


def _start(
    bootstrap: str, topic: str, group: str, out: Path, sleep_s: float
) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.processing.service",
            bootstrap,
            topic,
            group,
            str(out),
            str(sleep_s),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _lines(path: Path) -> list[tuple[str, str]]:
    if not path.exists():
        return []
    return [tuple(line.split(" ", 1)) for line in path.read_text().splitlines() if " " in line]  # type: ignore[misc]


def test_kill_9_mid_run_then_restart_loses_nothing_and_sigterm_commits(
    bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory(partitions=3)
    sent = produce(
        bootstrap, topic, [{"key": f"k{i}".encode(), "value": f"v{i}".encode()} for i in range(N)]
    )
    group = f"crash-{uuid.uuid4().hex[:8]}"
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    proc = _start(bootstrap, topic, group, first, 0.002)
    try:
        wait_for(lambda: len(_lines(first)) >= 300, what="the first run to handle 300 records")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    handled_first = {v for t, v in _lines(first) if t == topic}
    assert len(handled_first) < N  # killed mid-run

    proc = _start(bootstrap, topic, group, second, 0.0)
    poison = {f"v{i}" for i in range(N) if i % 20 == 7}
    try:
        wait_for(
            lambda: (
                {v for t, v in _lines(second) if t == topic} | handled_first
                >= {f"v{i}" for i in range(N)}
            ),
            what="every record handled by one run or the other",
        )
        # every poison record dead-lettered (a kill -9 between a dead letter and its commit
        # writes it again: at least once, so read them all, duplicates included)
        wait_for(
            lambda: (
                poison
                <= {(d.value or b"").decode() for d in read_all(bootstrap, f"{topic}-dlt", N, 2)}
            ),
            what="every poison record in the dead-letter topic",
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert "stopped cleanly" in out
    again = [v for t, v in _lines(second) if t == topic and v in handled_first]
    assert len(again) < len(handled_first)  # the first run's commits held

    last = {}
    for r in sent:
        last[r.partition] = max(last.get(r.partition, -1), r.offset)
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        committed = consumer.committed([TopicPartition(topic, p) for p in last], timeout=10)
    finally:
        consumer.close()
    assert {tp.partition: tp.offset for tp in committed} == {p: o + 1 for p, o in last.items()}


def test_a_rebalance_commits_what_was_handled_so_no_record_is_handled_twice(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    n = 600
    produce(
        bootstrap,
        topic,
        [
            {"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": i % 2}
            for i in range(n)
        ],
    )
    handled: list[tuple[str, bytes]] = []

    def by(name: str) -> Callable[[Any], None]:
        def handle(msg: Any) -> None:
            handled.append((name, msg.value()))
            time.sleep(0.01)  # slow enough for the second member to join mid-run

        return handle

    group = f"rebalance-{uuid.uuid4().hex[:8]}"
    conf = config(bootstrap, group, **{"session.timeout.ms": 3000})
    first = Running(Processor(conf, [topic], by("a"), commit_interval=60, batch_size=10))
    second = None
    try:
        wait_for(lambda: len(handled) >= 40, what="the first member under way")
        second = Running(Processor(conf, [topic], by("b"), commit_interval=60, batch_size=10))
        wait_for(
            lambda: {v for _, v in handled} >= {f"v{i}".encode() for i in range(n)},
            what="every record handled",
        )
    finally:
        first.stop()
        if second is not None:
            second.stop()
    assert {name for name, _ in handled} == {"a", "b"}  # the partitions were shared
    values = [v for _, v in handled]
    assert len(values) == len(set(values))  # commits on revoke: nothing handled twice
