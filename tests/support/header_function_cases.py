"""The shared table of header lists that the Python and Spark header readers must agree on.

Each case is a record's headers (``None`` = Spark's NULL headers column, read as "no headers")
and the keys to ask about. Hand-written cases cover the edges; a seeded generator adds many
mixed ones (duplicates, null and empty values, 8-byte longs, varlongs, traceparents).
"""

from __future__ import annotations

import random
from typing import NamedTuple

from kheaders._codec.varint import write_varlong

HeaderList = list[tuple[str, bytes | None]]

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
GOOD_TP = f"00-{TRACE}-{SPAN}-01".encode()


class HeaderCase(NamedTuple):
    """One record's headers and the keys whose values both sides read."""

    name: str
    headers: HeaderList | None
    keys: tuple[str, ...] = ("a", "version", "traceparent", "missing")


def _tp(text: str) -> HeaderList:
    return [("traceparent", text.encode())]


_HAND: list[HeaderCase] = [
    HeaderCase("null headers column", None),
    HeaderCase("no headers", []),
    HeaderCase("one header", [("a", b"1")]),
    HeaderCase("duplicates, last wins", [("a", b"1"), ("b", b"x"), ("a", b"2")]),
    HeaderCase("null value last", [("a", b"1"), ("a", None)]),
    HeaderCase("empty value", [("a", b"")]),
    HeaderCase(
        "non-ascii key and value",
        [("ключ", "значение".encode()), ("a", "é".encode())],
        ("ключ", "a"),
    ),
    HeaderCase("invalid utf-8 overlong", [("a", b"\xc0\xaf")]),
    HeaderCase("invalid utf-8 surrogate", [("a", b"\xed\xa0\x80")]),
    HeaderCase("invalid utf-8 truncated", [("a", b"\xe2\x82")]),
    HeaderCase("invalid utf-8 beyond U+10FFFF", [("a", b"\xf4\x90\x80\x80")]),
    HeaderCase("long zero", [("version", bytes(8))]),
    HeaderCase("long -1", [("version", b"\xff" * 8)]),
    HeaderCase("long min", [("version", b"\x80" + bytes(7))]),
    HeaderCase("long max", [("version", b"\x7f" + b"\xff" * 7)]),
    HeaderCase("long 7 bytes", [("version", bytes(7))]),
    HeaderCase("long 9 bytes", [("version", bytes(9))]),
    HeaderCase("long then null", [("version", bytes(8)), ("version", None)]),
    HeaderCase("varlong 0", [("version", b"\x00")]),
    HeaderCase("varlong -1", [("version", b"\x01")]),
    HeaderCase("varlong 300", [("version", write_varlong(300))]),
    HeaderCase("varlong max", [("version", write_varlong((1 << 63) - 1))]),
    HeaderCase("varlong min", [("version", write_varlong(-(1 << 63)))]),
    HeaderCase("varlong non-minimal", [("version", b"\x80\x00")]),
    HeaderCase("varlong truncated", [("version", b"\x80")]),
    HeaderCase("varlong trailing byte", [("version", b"\x02\x02")]),
    HeaderCase("varlong 11 bytes", [("version", b"\x80" * 10 + b"\x00")]),
    HeaderCase("varlong 10th byte too big", [("version", b"\xff" * 9 + b"\x02")]),
    HeaderCase("varlong 10th byte 1", [("version", b"\xff" * 9 + b"\x01")]),
    HeaderCase("traceparent valid", [("traceparent", GOOD_TP)]),
    HeaderCase("traceparent twice", [("traceparent", GOOD_TP), ("traceparent", GOOD_TP)]),
    HeaderCase("traceparent null", [("traceparent", None)]),
    HeaderCase("traceparent uppercase", _tp(f"00-{TRACE.upper()}-{SPAN}-01")),
    HeaderCase("traceparent version ff", _tp(f"ff-{TRACE}-{SPAN}-01")),
    HeaderCase("traceparent zero trace", _tp(f"00-{'0' * 32}-{SPAN}-01")),
    HeaderCase("traceparent zero span", _tp(f"00-{TRACE}-{'0' * 16}-01")),
    HeaderCase("traceparent 00 trailing", _tp(f"00-{TRACE}-{SPAN}-01-extra")),
    HeaderCase("traceparent future trailing", _tp(f"cc-{TRACE}-{SPAN}-01-what-ever")),
    HeaderCase("traceparent future bad trailing", _tp(f"cc-{TRACE}-{SPAN}-01x")),
    HeaderCase("traceparent future exact", _tp(f"01-{TRACE}-{SPAN}-00")),
    HeaderCase("traceparent short trace", _tp(f"00-{TRACE[:-1]}-{SPAN}-01")),
    HeaderCase("traceparent three fields", _tp(f"00-{TRACE}-{SPAN}")),
    HeaderCase("traceparent trailing newline", _tp(f"00-{TRACE}-{SPAN}-01\n")),
    HeaderCase("traceparent leading space", _tp(f" 00-{TRACE}-{SPAN}-01")),
    HeaderCase("traceparent not hex", _tp(f"00-{TRACE[:-1]}g-{SPAN}-01")),
    HeaderCase("traceparent surrounding tab and spaces", _tp(f"\t 00-{TRACE}-{SPAN}-01  ")),
    HeaderCase("traceparent future trailing space", _tp(f"cc-{TRACE}-{SPAN}-01-x ")),
    HeaderCase("traceparent future space not dash", _tp(f"cc-{TRACE}-{SPAN}-01 x")),
    HeaderCase("traceparent future bare dash", _tp(f"cc-{TRACE}-{SPAN}-01-")),
    HeaderCase("traceparent future newline data", _tp(f"cc-{TRACE}-{SPAN}-01-\n")),
    HeaderCase("traceparent future non-ascii", _tp(f"cc-{TRACE}-{SPAN}-01-é")),
    HeaderCase("traceparent 00 trailing tab data", _tp(f"00-{TRACE}-{SPAN}-01\tx")),
    HeaderCase("traceparent invalid utf-8", [("traceparent", GOOD_TP[:-1] + b"\xff")]),
]


def _random_value(rng: random.Random) -> bytes | None:
    kind = rng.randrange(7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.getrandbits(64).to_bytes(8, "big")
    if kind == 2:
        return write_varlong(rng.randrange(-(1 << 63), 1 << 63) >> rng.randrange(64))
    if kind == 3:
        return rng.randbytes(rng.randrange(0, 12))
    if kind == 4:
        return rng.choice(["", "x", "ü", "日本", "a-b"]).encode()
    if kind == 5:
        return GOOD_TP
    return rng.randbytes(rng.randrange(1, 4)) + b"-" + GOOD_TP


def _random_cases(count: int, seed: int = 280) -> list[HeaderCase]:
    rng = random.Random(seed)
    keys = ["a", "version", "traceparent", "b"]
    return [
        HeaderCase(
            f"random {i}",
            [(rng.choice(keys), _random_value(rng)) for _ in range(rng.randrange(0, 7))],
        )
        for i in range(count)
    ]


CASES: list[HeaderCase] = _HAND + _random_cases(300)
