"""ParkingProducer: records librdkafka's full queue refuses wait, in order, with their reports."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaError

from kheaders.aio._parking import ParkingProducer

FULL_AT_TWO = {
    "bootstrap.servers": "127.0.0.1:9",  # nothing listens: records stay queued
    "log_level": 0,
    "queue.buffering.max.messages": 2,
}


def test_a_full_queue_parks_records_in_order_then_reports_them_purged() -> None:
    p = ParkingProducer(FULL_AT_TWO)
    reports: list[tuple[Any, Any, Any]] = []

    def report(err: Any, msg: Any) -> None:
        reports.append((err.code(), msg.value(), msg.key()))

    p.produce("t", b"0", None, -1, report, None, 0, None)  # by position, as kheaders calls it
    p.produce("t", b"1", on_delivery=report)  # by keyword, as confluent's users call it
    p.produce("t", b"2", b"k2", -1, None, report, 0, [("h", b"x")])  # the queue is full
    p.produce("t", value=b"3", key=b"k3", callback=report)  # behind it, never ahead
    assert [args[1] for args in p.parked] == [b"2", b"3"]
    p.unpark()  # still no room: nothing moves, nothing is lost
    assert len(p.parked) == 2
    assert p.fail_parked() == 2
    assert reports == [
        (KafkaError._PURGE_QUEUE, b"2", b"k2"),
        (KafkaError._PURGE_QUEUE, b"3", b"k3"),
    ]
    p.purge()
    p.poll(0)
    assert sorted(r[1] for r in reports) == [b"0", b"1", b"2", b"3"]  # each reported once


def test_unparking_hands_records_over_once_there_is_room() -> None:
    p = ParkingProducer(FULL_AT_TWO)
    reports: list[bytes] = []
    for i in range(4):
        p.produce("t", b"%d" % i, on_delivery=lambda err, msg: reports.append(msg.value()))
    assert len(p.parked) == 2
    p.purge()
    p.poll(0)  # the two queued ones are reported: room for the parked two
    p.unpark()
    assert not p.parked
    p.purge()
    p.poll(0)
    assert reports == [b"0", b"1", b"2", b"3"]
