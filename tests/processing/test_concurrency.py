"""AIOProcessor with concurrency: records of one key in order, several keys at once; log
events name the record, never its value."""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest
from structlog.testing import capture_logs

from kheaders.processing import AIOProcessor, RetryTopics
from tests.processing.helpers import Running, config, produce, read_all, wait_for

pytestmark = pytest.mark.integration


def test_concurrent_handling_keeps_each_keys_order_and_overlaps_keys(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    n, keys = 300, 6
    produce(
        bootstrap,
        topic,
        [{"key": f"key-{i % keys}".encode(), "value": f"{i}".encode()} for i in range(n)]
        + [{"key": b"key-0", "value": b"secret-value"}],
    )
    seen: dict[bytes, list[int]] = defaultdict(list)
    running_now = 0
    most = 0
    rng = random.Random(7)

    async def handle(msg: Any) -> None:
        nonlocal running_now, most
        running_now += 1
        most = max(most, running_now)
        await asyncio.sleep(rng.random() / 500)  # unequal work: a plain task pool reorders
        running_now -= 1
        if msg.value() == b"secret-value":
            return
        seen[msg.key()].append(int(msg.value()))
        if msg.value() == b"13":
            raise ValueError("thirteen is unlucky")

    with capture_logs() as logs:
        running = Running(
            AIOProcessor(
                config(bootstrap),
                [topic],
                handle,
                concurrency=8,
                retry=RetryTopics(delays=[0.1]),
            )
        )
        try:
            wait_for(lambda: sum(map(len, seen.values())) == n + 1, what="every record")
            read_all(bootstrap, f"{topic}-dlt", 1)
        finally:
            running.stop()
    for key, values in seen.items():
        main = [v for v in values if v != 13 or values.count(13) == 1]
        assert main == sorted(main), key
    assert most > 1  # keys overlapped
    failed = [e for e in logs if e["event"] == "processing.failed"]
    assert sorted(e["attempt"] for e in failed) == [1, 2]  # on the topic, then the retry
    assert all({"topic", "partition", "offset", "attempt"} <= set(e) for e in failed)
    assert all(e["error"] == "ValueError: thirteen is unlucky" for e in failed)
    assert "secret-value" not in repr(logs)  # a record's value never reaches the log
