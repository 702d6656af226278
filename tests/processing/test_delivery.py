"""A handler learns which attempt it is on, and the original topic, partition and offset,
without decoding ``retry_topic-attempts`` itself (issue 35.2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Message

from kheaders import ProcessingError
from kheaders.processing import Delivery, RetryTopics, delivery
from tests.processing.helpers import ALL, Running, config, make, produce, read_all, wait_for


def test_delivery_outside_a_processor_says_where_it_answers() -> None:
    msg = Message(topic="orders", partition=0, offset=3, value=b"v")
    with pytest.raises(ProcessingError, match=r"inside the handler of a running Processor"):
        delivery(msg)


@pytest.mark.integration
@pytest.mark.parametrize("driver", ALL)
def test_every_attempt_tells_its_number_and_the_original_record(
    bootstrap: str, topic_factory: Callable[..., str], driver: str
) -> None:
    topic = topic_factory(partitions=2)
    sent = produce(
        bootstrap,
        topic,
        [
            {"key": b"a", "value": b"ok", "partition": 1},
            {"key": b"b", "value": b"flaky", "partition": 1},
        ],
    )
    flaky = next(r for r in sent if r.value == b"flaky")
    seen: list[tuple[bytes, Delivery, str]] = []

    def handle(msg: Any) -> None:
        seen.append((msg.value(), delivery(msg), msg.topic()))
        if msg.value() == b"flaky":
            raise ConnectionError("payment service unavailable")

    retry = RetryTopics(delays=[0.1], in_place=1)
    running = Running(make(driver, config(bootstrap), [topic], handle, retry=retry))
    try:
        read_all(bootstrap, f"{topic}-dlt", 1)
        wait_for(lambda: len(seen) == 5, what="every attempt")
    finally:
        running.stop()
    ok = [d for value, d, _ in seen if value == b"ok"]
    assert ok == [Delivery(1, 2, 0, topic, 1, 0, ok[0].timestamp)]
    assert not ok[0].retried
    tries = [(d.attempt, d.in_place, where) for value, d, where in seen if value == b"flaky"]
    assert tries == [
        (1, 0, topic),
        (1, 1, topic),  # the quick attempt in place
        (2, 0, f"{topic}-retry"),  # from the retry topic, the last attempt (max_attempts 2)
        (2, 1, f"{topic}-retry"),
    ]
    for value, d, _ in seen:
        if value == b"flaky":
            assert (d.topic, d.partition, d.offset) == (topic, 1, flaky.offset)
            assert d.timestamp == flaky.timestamp[1]
            assert d.max_attempts == 2
