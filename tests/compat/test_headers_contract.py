"""Headers as confluent-kafka users handle them: the shapes produce() takes, and what
``msg.headers()`` gives back (a list of ``(str, bytes | None)`` tuples, equal to what was
sent, indexable, a ``list``). Read from tests/test_Producer.py (test_produce_headers) and
integration_test.py (headers round trip, set_headers) of confluent-kafka-python.
"""

from __future__ import annotations

from collections.abc import Callable
from struct import pack
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from tests.compat.conftest import build_consumer, build_producer, read
from tests.compat.differences import contract

pytestmark = pytest.mark.integration

BINARY = pack("hhl", 1, 2, 3)

SENT: list[tuple[str, Any]] = [
    ("text", "value"),
    ("dup", b"1"),
    ("empty", ""),
    ("dup", b"2"),
    ("null", None),
    ("binary", BINARY),
    ("unicode", "Jämtland"),
]
RECEIVED = [
    ("text", b"value"),
    ("dup", b"1"),
    ("empty", b""),
    ("dup", b"2"),
    ("null", None),
    ("binary", BINARY),
    ("unicode", "Jämtland".encode()),
]


@pytest.fixture
def round_trip(
    producer_config: dict[str, Any], consumer_config: dict[str, Any], topic: str
) -> Callable[..., Any]:
    """``round_trip(flavour, headers)``: produce one record with ``headers``, read it back."""

    def run(flavour: str, headers: Any) -> Any:
        producer = build_producer(flavour, producer_config)
        producer.produce(topic, b"v", headers=headers)
        assert producer.flush(10) == 0
        consumer = build_consumer(flavour, consumer_config)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        (msg,) = read(consumer, 1)
        consumer.close()
        return msg

    return run


def test_list_of_tuples_comes_back_equal_indexable_and_a_list(
    flavour: str, round_trip: Callable[..., Any]
) -> None:
    msg = round_trip(flavour, SENT)
    with contract("received_headers_are_a_list_equal_to_the_pairs", flavour):
        headers = msg.headers()
        assert headers == RECEIVED
        assert isinstance(headers, list)
        assert headers[0] == ("text", b"value")
        assert headers[-1][1] == "Jämtland".encode()
        assert len(headers) == 7
        assert dict(headers)["dup"] == b"2"
        assert [k for k, _ in headers] == [k for k, _ in RECEIVED]


def test_a_dict_is_sent_as_pairs(flavour: str, round_trip: Callable[..., Any]) -> None:
    msg = round_trip(flavour, {"a": "1", "null": None, "bin": BINARY})
    with contract("headers_dict", flavour):
        assert msg.headers() == [("a", b"1"), ("null", None), ("bin", BINARY)]


def test_a_record_without_headers(flavour: str, round_trip: Callable[..., Any]) -> None:
    msg = round_trip(flavour, None)
    with contract("headers_of_a_record_without_headers_is_none", flavour):
        assert msg.headers() is None
    assert not msg.headers()  # what portable code tests, on every flavour


def test_received_headers_can_be_changed_in_place(
    flavour: str, round_trip: Callable[..., Any]
) -> None:
    msg = round_trip(flavour, [("a", b"1")])
    with contract("received_headers_are_mutable", flavour):
        msg.headers().append(("b", b"2"))
        assert msg.headers() == [("a", b"1"), ("b", b"2")]
    msg.set_headers([("foo", b"bar")])  # replacing them works on every flavour
    assert msg.headers() == [("foo", b"bar")]


def test_bad_header_shapes_are_type_errors(
    flavour: str, producer_config: dict[str, Any], topic: str
) -> None:
    with contract("bad_header_shapes", flavour):
        producer = build_producer(flavour, producer_config)
        for bad in (("a", "b"), ["malformed"], {"anint": 1234}):
            with pytest.raises(TypeError):
                producer.produce(topic, b"v", headers=bad)
        assert producer.flush(10) == 0


def test_a_bytes_key_is_sent_as_its_repr(flavour: str, round_trip: Callable[..., Any]) -> None:
    with contract("header_key_bytes_is_str_converted", flavour):
        msg = round_trip(flavour, [(b"k", b"v")])
        assert msg.headers() == [("b'k'", b"v")]


def test_delivery_report_headers(flavour: str, producer_config: dict[str, Any], topic: str) -> None:
    seen: list[Any] = []
    producer = build_producer(flavour, producer_config)
    producer.produce(
        topic, b"v", headers=[("a", b"1")], on_delivery=lambda e, m: seen.append(m.headers())
    )
    assert producer.flush(10) == 0
    with contract("delivery_report_headers_is_none", flavour):
        assert seen == [None]
