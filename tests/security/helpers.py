"""Small waits shared by the security tests."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from kheaders import Consumer


def read_all(config: dict[str, Any], topic: str, count: int, timeout: float = 60.0) -> list[Any]:
    """``count`` records of ``topic`` (partition 0, from the start) read by a kheaders Consumer
    built from ``config``; fails after ``timeout`` seconds."""
    consumer = Consumer({**config, "group.id": "reader", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg)
    finally:
        consumer.close()
    assert len(got) == count, f"read {len(got)} of {count} records of {topic}"
    return got
