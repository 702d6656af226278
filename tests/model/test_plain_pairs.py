"""plain_pairs: closed headers kept in flight store plain tuples, and read exactly as before."""

from __future__ import annotations

import gc

import pytest

from kheaders import Header, Headers, ReadOnlyHeadersError
from kheaders._model.headers import pairs, plain_pairs


def test_closed_headers_store_plain_tuples_the_collector_untracks() -> None:
    h = Headers([("a", b"1"), ("b", None), ("a", b"")]).close()
    assert plain_pairs(h) is h
    stored = list(pairs(h))
    assert [type(p) for p in stored] == [tuple, tuple, tuple]
    gc.collect()
    assert not any(gc.is_tracked(p) for p in stored)


def test_they_read_as_before() -> None:
    h = Headers([("a", b"1"), ("b", None), ("a", b"")]).close()
    before = (list(h), h.to_list(), h.last_header("a"), h["b"], h[0], repr(h))
    plain_pairs(h)
    assert (list(h), h.to_list(), h.last_header("a"), h["b"], h[0], repr(h)) == before
    assert all(type(x) is Header for x in h)
    assert type(h[-1]) is Header
    assert next(reversed(h)) == Header("a", b"")
    assert h == [("a", b"1"), ("b", None), ("a", b"")]
    with pytest.raises(ReadOnlyHeadersError):
        h.add("c", b"3")
    copy = h.copy()
    copy.add("c", b"3")
    assert all(type(x) is Header for x in pairs(copy))


def test_writable_headers_are_left_alone() -> None:
    h = Headers([("a", b"1")])
    plain_pairs(h)
    assert [type(p) for p in pairs(h)] == [Header]
    assert not h.read_only
