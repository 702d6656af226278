"""The commit point of the copy path: streams of copies to a fixed partition, copies tracked
one by one, copies sent again. The producer here is a stand-in that queues each copy and
reports it (in produce order within a partition, as an idempotent producer does) with the
error the test chooses; what crosses the wire is tested in the other files of this folder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError, Message
from opentelemetry.trace import NoOpTracer

from kheaders.deadletter import DeadLetter
from kheaders.mirror import RoutingTable
from kheaders.mirror._copy import Copier
from kheaders.mirror._deadletters import DeadLetters
from kheaders.mirror._metrics import MirrorStats
from kheaders.mirror._sender import Sender
from kheaders.mirror._setup import Plan

TOPIC = "orders"


class QueueingProducer:
    """Queues (target, partition, headers, callback); :meth:`report` answers the oldest."""

    def __init__(self) -> None:
        self.queue: list[tuple[str, int, Any, Callable[[Any, Any], None]]] = []

    def produce(self, target: str, _value: Any, _key: Any, partition: int, **kw: Any) -> None:
        self.queue.append((target, partition, kw["headers"], kw["on_delivery"]))

    def report(self, error: KafkaError | None = None, index: int = 0) -> tuple[str, int, Any]:
        target, partition, headers, callback = self.queue.pop(index)
        callback(error, None)
        return target, partition, headers

    def poll(self, _timeout: float = 0) -> int:
        return 0


def records(offsets: range, partition: int = 0) -> list[Message]:
    return [
        Message(topic=TOPIC, partition=partition, offset=o, key=b"k", value=b"v", headers=[])
        for o in offsets
    ]


def sender_for(
    table: RoutingTable, *, partitions: int = 2, in_order: bool = True, same: bool = True
) -> tuple[Sender, QueueingProducer]:
    producer = QueueingProducer()
    targets = dict.fromkeys((TOPIC, "audit"), partitions)
    plan = Plan("a", "b", (TOPIC,), targets, {})
    stats = MirrorStats()
    dead = DeadLetters(DeadLetter(suffix=".dlt"), "g", stats)
    sender = Sender(
        plan,
        Copier(table, "a", "b"),
        producer,
        dead,
        stats=stats,
        tracer=NoOpTracer(),
        same_partition=same,
        in_order=in_order,
    )
    return sender, producer


def upto(sender: Sender, partition: int = 0) -> int | None:
    """The offset the mirror would commit now (``None``: nothing read yet)."""
    points = sender.offsets.to_commit({(TOPIC, partition)})
    return points[0].offset if points else None


def test_a_stream_commits_only_below_its_oldest_unacknowledged_copy() -> None:
    sender, producer = sender_for(RoutingTable())
    sender.copy_batch(records(range(5)))
    assert len(sender.streams) == 1  # one callback for the partition's copies
    assert sender.in_flight == 5
    assert upto(sender) == 0
    producer.report()
    producer.report()
    assert upto(sender) == 2
    assert sender.in_flight == 3
    sender.count_acknowledged()
    assert sender.stats.total("sent") == 2


def test_a_failed_copy_holds_the_commit_point_until_its_retry_lands() -> None:
    sender, producer = sender_for(RoutingTable())
    sender.copy_batch(records(range(4)))
    producer.report()
    producer.report(KafkaError(KafkaError._TRANSPORT))  # offset 1
    producer.report()
    producer.report()
    assert upto(sender) == 1  # offsets 2 and 3 are acknowledged, 1 is not
    assert sender.stats.total("retried") == 1
    sender.send_retries()
    assert sender.in_flight == 1
    assert upto(sender) == 1
    target, partition, headers = producer.report()
    assert (target, partition) == (TOPIC, 0)
    assert ("kheaders.origin.offset", b"1") in headers  # the same copy, made again
    assert upto(sender) == 4
    assert sender.in_flight == 0
    sender.count_acknowledged()
    assert sender.stats.total("sent") == 4


def test_fan_out_commits_a_record_once_every_copy_landed() -> None:
    from kheaders.mirror import Route

    table = RoutingTable([Route({}, to=[TOPIC, "audit"], name="both")])
    sender, producer = sender_for(table)
    sender.copy_batch(records(range(2)))
    assert len(sender.streams) == 2
    assert sender.in_flight == 4
    producer.report()  # orders <- 0
    producer.report()  # audit <- 0
    assert upto(sender) == 1
    producer.report(index=1)  # audit <- 1
    assert upto(sender) == 1  # orders <- 1 is still out
    producer.report()
    assert upto(sender) == 2


@pytest.mark.parametrize(
    ("in_order", "same"), [(False, True), (True, False)], ids=["not-idempotent", "by-key"]
)
def test_copies_without_an_order_to_rely_on_are_tracked_one_by_one(
    in_order: bool, same: bool
) -> None:
    sender, producer = sender_for(RoutingTable(), in_order=in_order, same=same)
    sender.copy_batch(records(range(3)))
    assert not sender.streams
    assert sender.in_flight == 3
    assert producer.queue[0][1] == (-1 if not same else 0)
    producer.report(index=2)  # the last acknowledged first
    assert upto(sender) == 0
    producer.report()
    producer.report()
    assert upto(sender) == 3
    assert sender.stats.total("sent") == 3


def test_a_fatal_producer_error_stops_the_commit_point() -> None:
    sender, producer = sender_for(RoutingTable())
    sender.copy_batch(records(range(2)))
    fatal = KafkaError(KafkaError._FATAL, fatal=True)
    producer.report(fatal)
    assert sender.fatal is fatal
    producer.report()
    assert upto(sender) == 0


def test_a_partition_the_target_lacks_goes_by_key_and_records_dropped_count_as_done() -> None:
    from kheaders.mirror import Route

    table = RoutingTable([Route({"skip": True}, to=None, name="skip")])
    sender, producer = sender_for(table, partitions=1)
    dropped = Message(topic=TOPIC, partition=3, offset=1, headers=[("skip", b"")])
    sender.copy_batch([*records(range(1), partition=3), dropped])
    assert producer.queue[0][1] == -1  # the target has no partition 3
    assert upto(sender, 3) == 0
    producer.report()
    assert upto(sender, 3) == 2  # the dropped record does not hold the commit point


@pytest.mark.parametrize(
    ("config", "in_order"),
    [
        ({"enable.idempotence": True}, True),
        ({"enable.idempotence": "true"}, True),
        ({"enable.idempotence": False}, False),
        ({"enable.idempotence": False, "max.in.flight.requests.per.connection": 1}, True),
        ({"max.in.flight.requests.per.connection": "5"}, False),
        ({}, False),
    ],
)
def test_streams_only_for_a_producer_that_reports_in_order(
    config: dict[str, object], in_order: bool
) -> None:
    from kheaders.mirror._mirror import reports_in_order

    assert reports_in_order(config) is in_order


def test_a_restart_skips_what_the_last_commit_says_was_copied_beyond_it() -> None:
    from kheaders._offsets import encode_done

    sender, producer = sender_for(RoutingTable(), in_order=False)  # reports in any order
    sender.copy_batch(records(range(4)))
    producer.report()  # 0
    producer.report(index=1)  # 2 (1 and 3 still out)
    (point,) = sender.offsets.to_commit()
    assert point.offset == 1
    assert point.metadata == encode_done(1, [1, 3], 3)
    restarted, again = sender_for(RoutingTable())
    restarted.offsets.restore((TOPIC, 0), point.offset, point.metadata)
    restarted.copy_batch(records(range(1, 6)))
    copied = [dict(headers)["kheaders.origin.offset"] for _, _, headers, _ in again.queue]
    assert copied == [b"1", b"3", b"4", b"5"]  # 2 is not copied twice
    while again.queue:
        again.report()
    assert upto(restarted) == 6
