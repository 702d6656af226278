"""Loader of the shared KIP-280 rule table ``tests/data/compaction_cases.json``.

Both the client-side compaction (``kheaders.compaction``) and the Spark SQL implementation
must give every case's ``expected`` state.  Usage::

    from tests.support.compaction_cases import load_cases
    for case in load_cases():
        ...  # case.records -> your implementation -> compare with case.expected

Format (``"format": 1``) of one case in the JSON::

    {"name": str, "description": str,
     "strategy": str, "header": str | null, "encoding": "long" | "varlong",
     "records": [{"key": text, "value": text | null, "partition": int, "offset": int,
                  "timestamp": int, "headers": [[key, VALUE], ...]  (optional, default [])}],
     "expected": {key text: [partition, offset]},        surviving keys only
     "counters": {"undecodable_versions": int, "cross_partition_keys": int}  (optional)}

``VALUE`` is ``{"long": n}`` (8 bytes big-endian signed), ``{"varlong": n}`` (zigzag
varlong), ``{"hex": "..."}`` (raw bytes, for malformed values) or ``null`` (null header).
Keys and values are UTF-8 text in the JSON and ``bytes`` here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

CASES_PATH = Path(__file__).resolve().parents[1] / "data" / "compaction_cases.json"


class CaseRecord(NamedTuple):
    """One record of a case, as a consumer would see it."""

    key: bytes
    value: bytes | None
    partition: int
    offset: int
    timestamp: int
    headers: list[tuple[str, bytes | None]]


@dataclass(frozen=True)
class Case:
    """One row of the rule table: settings, records in arrival order, the expected state.

    ``expected`` maps each surviving key to its winner's ``(partition, offset)``;
    ``counters`` holds the order-independent counts the case pins (may be empty).
    """

    name: str
    strategy: str
    header: str | None
    encoding: str
    records: list[CaseRecord]
    expected: dict[bytes, tuple[int, int]]
    description: str = ""
    counters: dict[str, int] = field(default_factory=dict)


def _zigzag_varlong(n: int) -> bytes:
    if not -(1 << 63) <= n < (1 << 63):
        raise ValueError(f"varlong out of 64-bit range: {n}")
    z = ((n << 1) ^ (n >> 63)) & 0xFFFF_FFFF_FFFF_FFFF
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def header_value(spec: object) -> bytes | None:
    """Decode one JSON header value spec (see the module docstring)."""
    if spec is None:
        return None
    if not isinstance(spec, dict) or len(spec) != 1:
        raise ValueError(f"header value must be null or a one-entry object, got {spec!r}")
    ((kind, n),) = spec.items()
    if kind == "long":
        return int(n).to_bytes(8, "big", signed=True)
    if kind == "varlong":
        return _zigzag_varlong(int(n))
    if kind == "hex":
        return bytes.fromhex(str(n))
    raise ValueError(f"unknown header value kind {kind!r} (long, varlong, hex)")


def _record(case: str, raw: dict[str, object]) -> CaseRecord:
    key = raw["key"]
    value = raw["value"]
    headers = raw.get("headers", [])
    if not isinstance(key, str) or not (value is None or isinstance(value, str)):
        raise ValueError(f"case {case}: key must be text and value text or null: {raw!r}")
    if not isinstance(headers, list):
        raise ValueError(f"case {case}: headers must be a list: {raw!r}")
    return CaseRecord(
        key=key.encode(),
        value=None if value is None else value.encode(),
        partition=int(raw["partition"]),  # type: ignore[call-overload]
        offset=int(raw["offset"]),  # type: ignore[call-overload]
        timestamp=int(raw["timestamp"]),  # type: ignore[call-overload]
        headers=[(str(k), header_value(v)) for k, v in headers],
    )


def load_cases(path: Path = CASES_PATH) -> list[Case]:
    """Every case of the table, validated (unique names; unique (partition, offset))."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != 1:
        raise ValueError(f"{path}: unsupported format {data.get('format')!r}")
    cases: list[Case] = []
    names: set[str] = set()
    for raw in data["cases"]:
        name = raw["name"]
        if name in names:
            raise ValueError(f"{path}: duplicate case name {name!r}")
        names.add(name)
        records = [_record(name, r) for r in raw["records"]]
        positions = [(r.partition, r.offset) for r in records]
        if len(set(positions)) != len(positions):
            raise ValueError(f"case {name}: two records share a (partition, offset)")
        expected = {k.encode(): (int(p), int(o)) for k, (p, o) in raw["expected"].items()}
        for key, pos in expected.items():
            if pos not in positions or records[positions.index(pos)].key != key:
                raise ValueError(f"case {name}: expected {key!r} -> {pos} is not a record of it")
        cases.append(
            Case(
                name=name,
                strategy=raw["strategy"],
                header=raw.get("header"),
                encoding=raw.get("encoding", "long"),
                records=records,
                expected=expected,
                description=raw.get("description", ""),
                counters=dict(raw.get("counters", {})),
            )
        )
    return cases
