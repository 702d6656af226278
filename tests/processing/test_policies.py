"""Retry topic names, commit offsets and paused partitions: the processor's rules alone."""

from __future__ import annotations

import pytest

from kheaders import ConfigurationError, DeserializationError
from kheaders.processing import DeadLetter, RetryTopics
from kheaders.processing._commits import Offsets
from kheaders.processing._pause import Paused


def test_topic_names_follow_springs_defaults() -> None:
    same = RetryTopics(delays=[1, 1, 1])
    assert same.retry_topics("orders") == ["orders-retry"]
    assert same.retry_topic("orders", 4) == "orders-retry"
    varied = RetryTopics(delays=[1, 2, 2, 4])
    assert varied.retry_topics("orders") == [
        "orders-retry-1000",
        "orders-retry-2000",
        "orders-retry-4000",
    ]
    assert varied.retry_topic("orders", 2) == "orders-retry-1000"
    assert varied.retry_topic("orders", 5) == "orders-retry-4000"
    assert varied.max_attempts == 5
    assert DeadLetter().topic_for("orders") == "orders-dlt"
    assert DeadLetter(topic="all-dead").topic_for("orders") == "all-dead"


def test_deserialization_failures_and_named_types_are_not_retried() -> None:
    retry = RetryTopics(delays=[1], not_retryable=(KeyError,))
    assert not retry.retryable(DeserializationError("x", message=None, field="value"))
    assert not retry.retryable(KeyError("k"))
    assert retry.retryable(ValueError("v"))


@pytest.mark.parametrize(
    "make",
    [
        lambda: RetryTopics(delays=[-1]),
        lambda: RetryTopics(delays=[float("nan")]),
        lambda: RetryTopics(in_place=-1),
        lambda: RetryTopics(retry_suffix=""),
        lambda: DeadLetter(contract="avro"),
        lambda: DeadLetter(suffix=""),
    ],
)
def test_bad_policies_are_refused(make: object) -> None:
    with pytest.raises(ConfigurationError):
        make()  # type: ignore[operator]


def test_commits_stop_at_the_oldest_unsettled_record() -> None:
    offsets = Offsets()
    tp = ("t", 0)
    offsets.settled_now(tp, 0)
    offsets.start(tp, 1)  # its failure is being published
    offsets.settled_now(tp, 2)
    offsets.settled_now(tp, 3)
    assert [(o.partition, o.offset) for o in offsets.to_commit()] == [(0, 1)]
    offsets.settle(tp, 1)
    got = offsets.to_commit()
    assert [(o.partition, o.offset) for o in got] == [(0, 4)]
    offsets.committed(got)
    assert offsets.to_commit() == []  # nothing new: no commit at all


def test_out_of_order_settling_and_forgotten_partitions() -> None:
    offsets = Offsets()
    tp = ("t", 1)
    for o in (10, 11, 12):
        offsets.start(tp, o)
    offsets.settle(tp, 12)
    offsets.settle(tp, 11)
    assert offsets.to_commit() == []
    offsets.settle(tp, 10)
    assert [o.offset for o in offsets.to_commit()] == [13]
    offsets.start(tp, 13)
    offsets.forget({tp})
    offsets.settle(tp, 13)  # a late report for a revoked partition changes nothing
    assert offsets.to_commit() == []


def test_paused_partitions_are_due_in_time_order() -> None:
    paused = Paused()
    paused.hold(("r", 0), 5, due_ms=1_000)
    paused.hold(("r", 1), 9, due_ms=3_000)
    assert paused.wait(10.0, at_ms=500) == 0.5
    assert paused.due(at_ms=999) == []
    assert [(t.topic, t.partition) for t in paused.due(at_ms=1_000)] == [("r", 0)]
    assert ("r", 1) in paused
    assert ("r", 0) not in paused
    assert paused.wait(0.1, at_ms=1_000) == 0.1
