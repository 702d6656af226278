"""Deserialized records republished as consumed; failures with nowhere to go; a handler slower
than max.poll.interval.ms (filtering and routing are the engine's: test_engine.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, TopicPartition
from structlog.testing import capture_logs

from kheaders import Consumer, JsonDeserializer, ProcessingError, Producer
from kheaders.deadletter import DeadLetter, DeadLetterPublisher
from kheaders.processing import RetryTopics
from tests.processing.helpers import ALL, Running, config, make, produce, read_all, wait_for

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("driver", ALL)  # (async-4: the bytes travel with a lane's run)
def test_a_decoded_record_that_fails_is_retried_with_its_consumed_bytes(
    bootstrap: str, topic_factory: Callable[..., str], driver: str
) -> None:
    topic = topic_factory()
    raw = b'{ "spaced" :  [1, 2] }'  # re-serializing would change these bytes
    produce(bootstrap, topic, [{"key": b"k", "value": raw}])
    calls: list[Any] = []

    def handle(msg: Any) -> None:
        calls.append(msg.value())
        raise RuntimeError("downstream down")

    proc = make(
        driver,
        config(bootstrap, **{"value.deserializer": JsonDeserializer()}),
        [topic],
        handle,
        retry=RetryTopics(delays=[0.1], in_place=2, not_retryable=(KeyError,)),
        dead_letter=DeadLetter(contract="kheaders"),
    )
    running = Running(proc)
    try:
        dead = read_all(bootstrap, f"{topic}-dlt", 1)
        retried = read_all(bootstrap, f"{topic}-retry", 1)
    finally:
        running.stop()
    assert calls == [{"spaced": [1, 2]}] * 6  # (1 + 2 in place) on the topic and the retry
    assert retried[0].value == raw
    assert dead[0].value == raw
    assert dead[0].last("kheaders.dlt.error.type") == b"builtins.RuntimeError"
    assert dead[0].last("kheaders.dlt.original.topic") == f"{topic}-retry".encode()


def test_a_failure_with_nowhere_to_go_stops_the_processor_uncommitted(
    bootstrap: str, topic_factory: Callable[..., str], driver: str
) -> None:
    topic = topic_factory()
    produce(bootstrap, topic, [{"key": b"a", "value": b"ok"}, {"key": b"b", "value": b"bad"}])

    def handle(msg: Any) -> None:
        if msg.value() == b"bad":
            raise ValueError("card declined\nby the bank " + "x" * 2000)

    group = f"nowhere-{driver}"
    with capture_logs() as logs:
        running = Running(make(driver, config(bootstrap, group), [topic], handle))
        wait_for(lambda: not running.alive, what="the processor to stop")
        with pytest.raises(ProcessingError, match=rf"{topic}\[0\]@1") as raised:
            running.stop()
    # the handler's own message is shown (issue 35.10), escaped and bounded in length
    assert "ValueError: card declined\\nby the bank xxx" in str(raised.value)
    assert len(str(raised.value)) < 1000
    (failed,) = [e for e in logs if e["event"] == "processing.failed"]
    assert failed["error"].startswith("ValueError: card declined\\nby the bank xxx")
    assert len(failed["error"]) < 1000
    assert b"bad".decode() not in failed["error"]  # the record's value is never logged
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (committed,) = reader.committed([TopicPartition(topic, 0)], timeout=10)
    finally:
        reader.close()
    assert committed.offset == 1  # "ok" committed at stop, "bad" not: read again next time


def test_dead_letter_publisher_sends_consumed_bytes_and_extra_headers(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    produce(bootstrap, topic, [{"key": b"k", "value": b'{"a":1}', "headers": [("h", b"1")]}])

    consumer = Consumer(config(bootstrap, **{"value.deserializer": JsonDeserializer()}))
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    msg = None
    while msg is None:
        msg = consumer.poll(1.0)
    assert msg.value() == {"a": 1}
    producer = Producer({"bootstrap.servers": bootstrap})
    publisher = DeadLetterPublisher(producer)
    publisher.publish(msg, ValueError("x"), headers=[("n", b"\x00\x02")])  # bytes kept
    assert producer.flush(10) == 0
    consumer.close()
    dead = read_all(bootstrap, f"{topic}-dlt", 1)
    assert dead[0].value == b'{"a":1}'
    assert dead[0].headers[0] == ("h", b"1")
    assert dead[0].headers[-1] == ("n", b"\x00\x02")


def test_a_handler_slower_than_max_poll_interval_fails_loudly(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    produce(bootstrap, topic, [{"key": b"a", "value": b"slow"}, {"key": b"b", "value": b"next"}])

    def handle(msg: Any) -> None:
        if msg.value() == b"slow":
            time.sleep(3)  # three times max.poll.interval.ms

    conf = config(
        bootstrap,
        **{"session.timeout.ms": 1000, "heartbeat.interval.ms": 200, "max.poll.interval.ms": 1000},
    )
    running = Running(make("sync", conf, [topic], handle))
    wait_for(lambda: not running.alive, what="run() to end")
    with pytest.raises(ProcessingError, match=r"max\.poll\.interval\.ms"):
        running.stop()
