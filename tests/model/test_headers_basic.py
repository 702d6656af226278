from __future__ import annotations

import pytest

from kheaders import Header, Headers, ReadOnlyHeadersError


def test_record_v2_layout_matches_kafka_default_record() -> None:
    h = Headers([("foo", b"value"), ("bar", None)])
    assert h.to_bytes().hex(" ") == "04 06 66 6f 6f 0a 76 61 6c 75 65 06 62 61 72 01"
    assert Headers().to_bytes() == b"\x00"
    assert Headers.from_bytes(h.to_bytes()) == h


def test_mutation_after_close_says_read_only_and_how_to_copy() -> None:
    h = Headers({"a": b"1"}).close()
    with pytest.raises(ReadOnlyHeadersError, match=r"Headers\(old_headers\)"):
        h.add("b", b"2")
    copy = Headers(h)
    copy.add("b", b"2")
    assert list(copy) == [Header("a", b"1"), Header("b", b"2")]
