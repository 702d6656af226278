"""The delivery-report contract, on every produce path (the ``produce_path`` fixture).

Whatever path a producer chose when it was built (plain, acknowledging, intercepted, and
kheaders.aio's carried ones), a record's report shows its headers as sent, a snapshot the
caller's later changes do not reach, as Header items; bad headers are refused naming the
key; the header memo never lets a changed list through; interceptors acknowledge each record
once. Real broker.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
from confluent_kafka import KafkaError

import kheaders
from kheaders import Header, Headers, InvalidNameError
from kheaders._client.producer import sender_of
from tests.clients.paths import ProducePath, chosen

pytestmark = pytest.mark.integration


@pytest.fixture
def config(bootstrap: str) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "linger.ms": 2}


def test_reports_show_the_headers_as_sent_whatever_shape_was_passed(
    produce_path: ProducePath, config: dict[str, Any], topic: str
) -> None:
    shapes: list[Any] = [
        [("a", b"1"), ("a", None), ("b", b"")],
        [("a", b"1"), ("a", None), ("b", b"")],  # the same pairs again: the memo's path
        {"a": "x", "b": b"y"},
        Headers([("h", b"1")]),
        [("v", bytearray(b"2"))],
        None,
        [],
    ]
    reports = produce_path.send(
        config, [{"topic": topic, "value": b"%d" % i, "headers": h} for i, h in enumerate(shapes)]
    )
    assert [r.error for r in reports] == [None] * len(shapes)
    assert [r.value for r in reports] == [b"%d" % i for i in range(len(shapes))]
    assert [r.headers for r in reports] == [
        [("a", b"1"), ("a", None), ("b", b"")],
        [("a", b"1"), ("a", None), ("b", b"")],
        [("a", b"x"), ("b", b"y")],
        [("h", b"1")],
        [("v", b"2")],
        [],
        [],
    ]
    acks = produce_path.interceptor.acks if produce_path.interceptor else None
    if acks is not None:  # once per record, the headers as sent
        assert [h for _, h in acks] == [r.headers for r in reports]


def test_a_list_changed_after_produce_is_reported_as_it_was_sent(
    produce_path: ProducePath, config: dict[str, Any], topic: str
) -> None:
    h = [("a", b"1")]

    def change(i: int) -> None:
        if i == 0:
            h[0] = ("a", b"changed")
            h.append(("b", b"2"))

    reports = produce_path.send(
        config, [{"topic": topic, "value": b"v", "headers": h} for _ in range(2)], change
    )
    assert [r.headers for r in reports] == [[("a", b"1")], [("a", b"changed"), ("b", b"2")]]


def test_a_mix_of_header_items_and_tuples_reads_as_header_items(
    produce_path: ProducePath, config: dict[str, Any], topic: str
) -> None:
    mixed = [Header("a", b"1"), ("b", b"2"), Header("c", b"3")]
    Headers(mixed).close()  # its keys are known: the plain check may let the list through
    reports = produce_path.send(
        config, [{"topic": topic, "value": b"v", "headers": mixed} for _ in range(2)]
    )
    for r in reports:  # read as Header items by the harness: .key would fail on a tuple
        assert r.headers == [("a", b"1"), ("b", b"2"), ("c", b"3")]


def test_bad_headers_are_refused_naming_the_key_and_the_memo_never_lets_a_change_through(
    produce_path: ProducePath, config: dict[str, Any], topic: str
) -> None:
    h = [("memo-key", b"1")]

    def change(i: int) -> None:
        if i == 1:  # two records sent: the list is the memo now; changed in place
            h.append(("bad\x00key", b"2"))

    with pytest.raises(InvalidNameError, match="bad"):
        produce_path.send(config, [{"topic": topic, "value": b"v", "headers": h}] * 3, change)
    h[1] = (b"k", b"2")  # type: ignore[assignment]
    with pytest.raises(TypeError, match="header key must be str"):
        produce_path.send(config, [{"topic": topic, "value": b"v", "headers": h}])


def test_a_failed_record_is_reported_with_its_error(produce_path: ProducePath, topic: str) -> None:
    unreachable = {"bootstrap.servers": "127.0.0.1:9", "message.timeout.ms": 500, "log_level": 0}
    reports = produce_path.send(
        unreachable, [{"topic": topic, "value": b"v", "headers": [("a", b"1")]}]
    )
    (report,) = reports
    assert report.error is not None
    assert report.error.code() == KafkaError._MSG_TIMED_OUT
    if report.headers is not None:  # an async failure has no message to show them on
        assert report.headers == [("a", b"1")]


class _State:
    def __init__(self) -> None:
        self.seen = 0

    def done(self, err: object, msg: object) -> None:
        self.seen += 1


@pytest.mark.parametrize("name", ["plain", "acknowledging", "intercepted"])
@pytest.mark.parametrize("headers", [None, [("h", b"1")]], ids=["no-headers", "headers"])
def test_delivery_callbacks_are_released_once_reported(
    name: str, headers: Any, config: dict[str, Any], topic: str
) -> None:
    """confluent's ``test_producer_dr_only_error``: a callback and what it holds live as long
    as a record of it is in flight, no longer (the async path takes no callbacks)."""
    from tests.clients.paths import produce_path

    path = produce_path(name)
    producer = kheaders.Producer(
        config, interceptors=[path.interceptor] if path.interceptor else []
    )
    assert chosen(sender_of(producer)) == path.expected
    states = [_State() for _ in range(3)]
    for state in states:
        for _ in range(2):
            producer.produce(topic, b"v", headers=headers, on_delivery=state.done)
    refs = [weakref.ref(s) for s in states]
    assert producer.flush(15) == 0
    assert [s.seen for s in states] == [2, 2, 2]
    del states, state
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    producer.close()


def test_the_plain_path_is_chosen_once_for_a_producer_nobody_intercepts(bootstrap: str) -> None:
    producer = kheaders.Producer({"bootstrap.servers": bootstrap})
    sender = sender_of(producer)
    assert chosen(sender) == (False, False)
    producer.produce("t", b"v")
    assert sender_of(producer) is sender
    producer.close(timeout=0)
