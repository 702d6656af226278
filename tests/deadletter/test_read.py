"""Reading where a dead letter came from: one rule for Spring's, Spring's plain recoverer's
and kheaders' own headers, used by ``failure``/``summary`` and by ``replay``."""

from __future__ import annotations

import io
from typing import Any

import pytest
from confluent_kafka import Message

from kheaders.deadletter import dead_letter_headers, failure, replay, spring_headers, summary

ORIGINS = {
    "spring": ("kafka_original-topic", (2).to_bytes(4, "big"), (7).to_bytes(8, "big")),
    "plain-spring": ("kafka_dlt-original-topic", (2).to_bytes(4, "big"), (7).to_bytes(8, "big")),
    "kheaders": ("kheaders.dlt.original.topic", b"2", b"7"),
}


@pytest.mark.parametrize("contract", ORIGINS)
def test_each_contract_reads_as_topic_partition_offset(contract: str) -> None:
    topic_key, partition, offset = ORIGINS[contract]
    stem = topic_key.removesuffix("topic")
    headers = [(topic_key, b"orders"), (stem + "partition", partition), (stem + "offset", offset)]
    found = failure(headers)
    assert found is not None
    assert found.original == "orders[2]@7"


@pytest.mark.parametrize("contract", ORIGINS)
def test_a_malformed_partition_or_offset_reads_as_a_question_mark(contract: str) -> None:
    topic_key = ORIGINS[contract][0]
    stem = topic_key.removesuffix("topic")
    headers = [(topic_key, b"orders"), (stem + "partition", b"\x01\x02"), (stem + "offset", None)]
    assert summary(headers) == "original=orders[?]@?"


class _Consumer:
    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.committed: list[Any] = []

    def poll(self, _timeout: float) -> Message | None:
        return self.messages.pop(0) if self.messages else None

    def commit(self, *, offsets: list[Any], asynchronous: bool) -> None:
        self.committed.extend((tp.topic, tp.partition, tp.offset) for tp in offsets)


class _Producer:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def produce(self, topic: str, **kwargs: Any) -> None:
        self.sent.append({"topic": topic, **kwargs})

    def poll(self, _timeout: float) -> int:
        return 0

    def flush(self, _timeout: float) -> int:
        for sent in self.sent:
            sent["on_delivery"](None, None)
        return 0

    def __len__(self) -> int:
        return 0


def _dead(headers: list[tuple[str, bytes | None]]) -> Message:
    return Message(
        topic="orders-dlt",
        partition=0,
        offset=5,
        key=b"k",
        value=b"v",
        headers=headers,
        timestamp=(1, 1_800_000_000_000),  # when it was dead-lettered
    )


def _replay(headers: list[tuple[str, bytes | None]]) -> tuple[dict[str, Any], str, list[Any]]:
    consumer, producer, out = _Consumer([_dead(headers)]), _Producer(), io.StringIO()
    code = replay(consumer, producer, "orders-dlt", out, to=None, where=[], limit=None, timeout=0.5)
    assert code == 0
    (sent,) = producer.sent
    return sent, out.getvalue(), consumer.committed


def test_replay_sends_a_kheaders_dead_letter_back_to_its_partition_and_time() -> None:
    original = Message(
        topic="orders",
        partition=1234,  # four digits: decimal text, not a 4-byte int
        offset=7,
        key=b"k",
        value=b"v",
        headers=[("trace", b"1")],
        timestamp=(1, 1_700_000_000_123),
    )
    sent, out, committed = _replay(dead_letter_headers(original, ValueError("bad")).to_list())
    assert (sent["topic"], sent["partition"]) == ("orders", 1234)
    assert sent["timestamp"] == 1_700_000_000_123
    assert sent["headers"] == [("trace", b"1")]
    assert out.splitlines()[0] == (
        "orders-dlt[0]@5 -> orders  key=k  original=orders[1234]@7  failed=builtins.ValueError: bad"
    )
    assert committed == [("orders-dlt", 0, 6)]


def test_replay_sends_a_spring_dead_letter_back_to_partition_zero() -> None:
    headers = spring_headers(
        [("trace", b"1")],
        topic="orders",
        partition=0,
        offset=7,
        timestamp=(1, 1_700_000_000_123),
        group=None,
        error=ValueError("bad"),
        next_attempt=3,
        due_ms=0,
    )
    sent, _, _ = _replay(headers)
    assert (sent["topic"], sent["partition"], sent["timestamp"]) == ("orders", 0, 1_700_000_000_123)
    assert sent["headers"] == [("trace", b"1")]


def test_replay_sends_to_any_partition_when_the_original_partition_is_malformed() -> None:
    sent, _, _ = _replay(
        [("kheaders.dlt.original.topic", b"orders"), ("kheaders.dlt.original.partition", b"one")]
    )
    assert (sent["topic"], sent["partition"]) == ("orders", -1)
    assert sent["timestamp"] == 1_800_000_000_000  # no original time: the dead letter's own
