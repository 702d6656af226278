"""The one-pass check of the usual headers (``plain_fit``): it never lets a rule's breach through.

Whatever it answers True for goes to librdkafka unchanged (the lean produce path) or skips the
exact limit checks, so True must imply every rule: exact ``tuple`` pairs, a ``str`` key known
valid, a ``bytes`` value, every limit. False only sends the headers the slow way, which
normalises them or raises the model's error.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from hypothesis import given
from hypothesis import strategies as st

from kheaders import Header, HeaderLimitError, HeaderLimits, Headers, InvalidNameError, Producer
from kheaders._client.producer import sender_of
from kheaders._model.keys import key_size
from kheaders._model.limits import DEFAULT_LIMITS, plain_fit
from tests.support.cores import Core

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}
KNOWN = ["a", "trace", "ключ", "x" * 40]


@pytest.fixture(autouse=True)
def _known_keys(core: Core) -> None:
    """The keys the properties use, known valid on the test's core (as a first send makes
    them)."""
    for key in KNOWN:
        key_size(key)


class Hdr(str, enum.Enum):  # noqa: UP042 - the point: str() of it is not its text
    """A ``(str, Enum)`` key: equal to ``"trace"``, but ``str()`` of it is ``"Hdr.TRACE"``."""

    TRACE = "trace"


class Lying(tuple):  # type: ignore[type-arg]
    """A pair whose iteration shows a known key while its items hold another one."""

    def __iter__(self) -> Iterator[Any]:
        return iter(("trace", b"v"))


def _within(items: list[tuple[str, bytes]], limits: HeaderLimits) -> bool:
    """The limits decided from first principles: sizes as encoded."""
    return (
        len(items) <= limits.max_headers
        and all(len(k.encode()) <= limits.max_key_bytes for k, _ in items)
        and all(len(v) <= limits.max_value_bytes for _, v in items)
        and len(Headers(items).to_bytes()) <= limits.max_total_bytes
    )


LIMITS = st.builds(
    HeaderLimits,
    max_headers=st.integers(1, 6),
    max_key_bytes=st.integers(1, 90),
    max_value_bytes=st.integers(1, 90),
    max_total_bytes=st.integers(1, 300),
)
ITEMS = st.lists(st.tuples(st.sampled_from(KNOWN), st.binary(max_size=80)), max_size=8)


@given(ITEMS, LIMITS)
def test_plain_check_never_passes_headers_over_a_limit(
    items: list[tuple[str, bytes]], limits: HeaderLimits
) -> None:
    within = _within(items, limits)
    if plain_fit(items, limits):
        assert within
    if within:
        limits.check(items)
    else:
        with pytest.raises(HeaderLimitError):
            limits.check(items)


@given(ITEMS)
def test_usual_headers_within_the_defaults_pass_in_one_look(items: list[tuple[str, bytes]]) -> None:
    assert plain_fit(items, DEFAULT_LIMITS)
    assert plain_fit(items, None)
    assert plain_fit([Header(k, v) for k, v in items], DEFAULT_LIMITS)


def test_sums_over_a_per_header_limit_get_each_size_compared() -> None:
    limits = HeaderLimits(max_key_bytes=5, max_value_bytes=4)
    assert limits.plain_budget == 4
    assert plain_fit([("trace", b"1234"), ("trace", b"1234")], limits)  # sums 10 and 8
    assert not plain_fit([("trace", b"12345")], limits)
    assert not plain_fit([("a", b""), ("x" * 40, b"")], limits)


@pytest.mark.parametrize(
    "pair",
    [
        ["trace", b"v"],  # a list: librdkafka takes tuples only
        Lying(("k\udcff", b"v")),  # librdkafka reads the items, not the iteration
        (Hdr.TRACE, b"v"),  # librdkafka would send str(key) == "Hdr.TRACE"
        ("trace", bytearray(b"v")),
        ("trace", "v"),  # str: its size is its UTF-8 bytes, counted the slow way
        ("trace", None),
        ("unknown-yet", b"v"),
        ("trace", b"v", b"extra"),
    ],
    ids=repr,
)
def test_anything_but_exact_tuples_of_known_str_and_bytes_looks_closer(pair: Any) -> None:
    assert plain_fit([("a", b"1"), pair], None) is False
    assert plain_fit([("a", b"1"), pair], DEFAULT_LIMITS) is False


def test_a_list_mutated_after_it_was_sent_is_checked_again() -> None:
    p = Producer(UNREACHABLE, limits=HeaderLimits(max_value_bytes=8))
    sent: list[Any] = []
    sender_of(p).hand = lambda *args: sent.append(args[-1])
    headers = [("trace", b"v")]
    p.produce("t", b"v", headers=headers)
    p.produce("t", b"v", headers=headers)
    headers.append(("a\x00b", b"v"))
    with pytest.raises(InvalidNameError, match="NUL"):
        p.produce("t", b"v", headers=headers)
    headers[1] = ("a", b"x" * 9)
    with pytest.raises(HeaderLimitError, match="'a': value of 9 bytes"):
        p.produce("t", b"v", headers=headers)
    headers[1] = (Hdr.TRACE, b"v")
    p.produce("t", b"v", headers=headers)
    assert [type(k) for k, _ in sent[-1]] == [str, str]
    assert len(sent) == 3
    p.close(timeout=0)


@pytest.mark.integration
def test_a_str_enum_key_goes_out_as_its_text(bootstrap: str, topic: str) -> None:
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"known", headers=[("trace", b"1")])  # "trace" is now a known key
    p.produce(topic, b"enum", headers=[(Hdr.TRACE, b"2")])
    assert p.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "plain-check"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: dict[bytes | None, object] = {}
    for _ in range(40):
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got[msg.value()] = msg.headers()
        if len(got) == 2:
            break
    consumer.close()
    assert got == {b"known": [("trace", b"1")], b"enum": [("trace", b"2")]}


class Spoof(str):
    """Equal to its text, but ``str()`` of it is other text: what librdkafka would send."""

    __slots__ = ()

    def __str__(self) -> str:
        return "spoofed"


@pytest.mark.parametrize("path", ["lean", "callback", "acknowledging"])
def test_an_equal_list_with_a_str_subclass_key_is_checked_not_vouched_for(path: str) -> None:
    class Ack:
        def on_acknowledgement(self, metadata: object, exception: object) -> None:
            pass

    p = Producer(UNREACHABLE, interceptors=[Ack()] if path == "acknowledging" else ())
    sent: list[Any] = []
    sender_of(p).hand = lambda *args: sent.append(args[-1])
    extra: dict[str, Any] = {"on_delivery": lambda err, msg: None} if path == "callback" else {}
    p.produce("t", b"v", headers=[("trace", b"1")], **extra)  # remembered as checked
    p.produce("t", b"v", headers=[(Spoof("trace"), b"1")], **extra)  # equal, not the same pair
    assert [type(k) for k, _ in sent[-1]] == [str]
    assert [str(k) for k, _ in sent[-1]] == ["trace"]
    p.close(timeout=0)
