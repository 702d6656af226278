"""Retry topic names and commit offsets: the processor's rules alone (the engine's decisions
are in test_engine.py)."""

from __future__ import annotations

import pytest

from kheaders import ConfigurationError, DeserializationError, ProcessingError
from kheaders._offsets import MAX_METADATA, Offsets, decode_done, encode_done
from kheaders.deadletter import DeadLetter
from kheaders.processing import Processor, RetryTopics


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
    assert not retry.retryable(ProcessingError("no handler for the record"))
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
    (point,) = offsets.to_commit()  # stops at 10; 11 and 12 named in its metadata
    assert (point.offset, point.metadata) == (10, "kheaders.done/1:1+2")
    offsets.settle(tp, 10)
    assert [o.offset for o in offsets.to_commit()] == [13]
    offsets.start(tp, 13)
    offsets.forget({tp})
    offsets.settle(tp, 13)  # a late report for a revoked partition changes nothing
    assert offsets.to_commit() == []


@pytest.mark.parametrize(
    ("options", "config"),
    [
        ({"commit_interval": 0}, {}),
        ({"batch_size": -1}, {}),
        ({"retry": RetryTopics(delays=[], in_place=200, in_place_delay=1)}, {}),
        ({"retry": RetryTopics(in_place=2, in_place_delay=4)}, {"max.poll.interval.ms": 10000}),
        ({}, {"enable.auto.commit": True}),
        ({}, {"group.id": ""}),
    ],
)
def test_bad_processor_options_are_refused_before_connecting(
    options: dict[str, object], config: dict[str, object]
) -> None:
    conf = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g", **config}
    with pytest.raises(ConfigurationError):
        Processor(conf, ["orders"], lambda m: None, **options)  # type: ignore[arg-type]


def test_a_record_handed_after_newer_ones_holds_the_commit_back_until_settled() -> None:
    offsets = Offsets()
    tp = ("t", 0)
    offsets.settled_now(tp, 0)
    offsets.settled_now(tp, 2)  # 1 was kept by the consumer (unreadable headers)
    offsets.start(tp, 1)  # raised a read later: its dead letter is on its way
    assert [o.offset for o in offsets.to_commit()] == [1]
    offsets.settled_now(tp, 3)
    assert [o.offset for o in offsets.to_commit()] == [1]
    offsets.settle(tp, 1)
    assert [o.offset for o in offsets.to_commit()] == [4]


def _points(offsets: Offsets) -> list[tuple[int, int, str | None]]:
    return [(o.partition, o.offset, o.metadata) for o in offsets.to_commit()]


def test_records_settled_past_an_unsettled_one_travel_in_the_commit_metadata() -> None:
    """Issue 35.1: a slow worker's record holds the committed offset back, but the records
    other workers finished after it are named, so a restart skips them."""
    offsets = Offsets()
    tp = ("t", 0)
    for o in range(8):
        offsets.start(tp, o)
    for o in (0, 1, 3, 4, 7):  # 2, 5 and 6 are still in the slow worker's hands
        offsets.settle(tp, o)
    assert _points(offsets) == [(0, 2, "kheaders.done/1:1+2,2+1")]
    again = Offsets()
    again.restore(tp, 2, "kheaders.done/1:1+2,2+1")
    assert tp in again.restoring
    assert [o for o in range(2, 10) if again.arrived(tp, o)] == [3, 4, 7]
    assert tp not in again.restoring  # past what the last run settled: the short way again


def test_a_restored_partition_keeps_its_metadata_until_its_holes_are_handled() -> None:
    offsets = Offsets()
    tp = ("t", 0)
    offsets.restore(tp, 2, "kheaders.done/1:1+2,2+1")  # 2, 5, 6 not settled; 3, 4, 7 were
    assert _points(offsets) == []  # nothing moved: no commit
    assert not offsets.arrived(tp, 2)
    offsets.settled_now(tp, 2)
    assert _points(offsets) == [(0, 5, "kheaders.done/1:2+1")]  # a second stop loses nothing
    assert offsets.arrived(tp, 3)
    assert not offsets.arrived(tp, 5)
    offsets.start(tp, 5)
    assert not offsets.arrived(tp, 6)
    offsets.settled_now(tp, 6)
    assert _points(offsets) == [(0, 5, "kheaders.done/1:1+2")]
    offsets.settle(tp, 5)
    assert _points(offsets) == [(0, 8, None)]


def test_holes_a_partition_skips_over_are_not_waited_for() -> None:
    """A record a previous run left unsettled that never comes back (a transaction marker,
    a record compacted away) does not hold the commit back for good."""
    offsets = Offsets()
    tp = ("t", 0)
    offsets.restore(tp, 2, "kheaders.done/1:1+2,2+1")
    assert not offsets.arrived(tp, 6)  # 2 and 5 were skipped over by the read
    offsets.settled_now(tp, 6)
    assert _points(offsets) == [(0, 8, None)]


@pytest.mark.parametrize(
    "metadata", [None, "", "spring-metadata", "kheaders.done/1:x+1", "kheaders.done/1:1+0"]
)
def test_commit_metadata_of_another_writer_or_malformed_is_ignored(metadata: str | None) -> None:
    offsets = Offsets()
    offsets.restore(("t", 0), 5, metadata)
    assert not offsets.restoring
    assert decode_done(5, metadata) is None


def test_commit_metadata_never_outgrows_the_brokers_default_limit() -> None:
    not_done = list(range(0, 40_000, 2))  # every other record unsettled
    metadata = encode_done(0, not_done, 40_000)
    assert metadata is not None
    assert len(metadata) <= MAX_METADATA
    found = decode_done(0, metadata)
    assert found is not None
    holes, high = found
    assert 0 < high < 40_000  # the runs past the limit are left out: handled again
    assert holes == [o for o in not_done if o < high]
