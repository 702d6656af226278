"""Headers' two stored shapes (Header items, plain tuples) read the same for every input.

Writable Headers hold only Header items; read-only ones may hold librdkafka's plain tuples.
Whatever mix of the two a caller passes, and whichever way the Headers were made, reading
them gives Header items only, and a writable copy stores Header items only.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from kheaders import Header, Headers, Producer
from kheaders._model.headers import pairs, plain_pairs, received, received_all, trusted

KEYS = st.sampled_from(["a", "b", "traceparent", "x-id"])
VALUES = st.one_of(st.none(), st.binary(max_size=4))


@st.composite
def mixed_pairs(draw: st.DrawFn) -> list[tuple[str, bytes | None]]:
    """A list of pairs, each a Header or a plain tuple, at random."""
    items = draw(st.lists(st.tuples(KEYS, VALUES, st.booleans()), max_size=6))
    return [Header(k, v) if as_header else (k, v) for k, v, as_header in items]


def reads_as_headers(h: Headers) -> None:
    """Every way of reading ``h`` gives Header items, equal to the stored pairs."""
    stored = list(pairs(h))
    assert all(type(x) is Header for x in h)
    assert [x.key for x in h] == [k for k, _ in stored]
    assert all(type(x) is Header for x in reversed(h))
    assert all(type(h[i]) is Header for i in range(len(h)))
    assert all(type(x) is Header for x in h[:])
    assert h == stored
    assert h.to_list() == [tuple(p) for p in stored]


def stores_headers(h: Headers) -> None:
    assert not h.read_only
    assert all(type(x) is Header for x in pairs(h))


MAKERS: dict[str, Callable[[list[Any]], Headers]] = {
    "Headers": Headers,
    "received": received,
    "received tuple": lambda items: received(tuple(items)),
    "received_all": lambda items: received_all([items])[0][0] or received([]),
    "trusted read-only": lambda items: trusted(items, read_only=True),
    "trusted writable": lambda items: trusted(items, read_only=False),
    "closed": lambda items: Headers(items).close(),
    "plain_pairs": lambda items: plain_pairs(Headers(items).close()),
    "from_confluent": lambda items: Headers.from_confluent(list(items), read_only=True),
}


SANDWICH = [Header("a", b"1"), ("b", b"2"), Header("c", b"3")]


@given(mixed_pairs(), st.sampled_from(sorted(MAKERS)))
@example(SANDWICH, "received")
@example(SANDWICH, "trusted read-only")
@example(SANDWICH, "received_all")
def test_every_way_of_making_headers_reads_header_items(items: list[Any], how: str) -> None:
    h = MAKERS[how](items)
    reads_as_headers(h)
    copies = [Headers(h), h.copy(), pickle.loads(pickle.dumps(h)).copy()]
    for copy in copies:
        stores_headers(copy)
        reads_as_headers(copy)
    reads_as_headers(h.__copy__())
    reads_as_headers(pickle.loads(pickle.dumps(h)))


def test_a_header_between_tuples_and_a_tuple_between_headers() -> None:
    for items in (
        [Header("a", b"1"), ("b", b"2"), Header("c", b"3")],
        [("a", b"1"), Header("b", b"2"), ("c", b"3")],
    ):
        ro = received(items)
        assert [x.key for x in ro] == ["a", "b", "c"]
        stores_headers(Headers(ro))


@given(mixed_pairs())
@example(SANDWICH)
def test_a_delivery_callback_reads_header_items_whatever_mix_was_passed(items: list[Any]) -> None:
    seen: list[Headers] = []
    p = Producer({"bootstrap.servers": "127.0.0.1:9", "log_level": 0})
    Headers(items).close()  # their keys are known now: the plain check may vouch for the list
    for _ in range(2):  # the second record: the memo's path
        p.produce("t", b"v", headers=items, on_delivery=lambda _, msg: seen.append(msg.headers()))  # type: ignore[arg-type]
    p.purge()
    assert p.flush(10) == 0
    p.close(timeout=0)
    assert len(seen) == 2
    for h in seen:
        reads_as_headers(h)
        stores_headers(Headers(h))
