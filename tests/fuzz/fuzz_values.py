"""Fuzz typed header values (TEXT, LONG, VARLONG, UUID, BOOL, JSON) and tagged structs."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._harness import instrumented

with instrumented(__name__ == "__main__"):
    from kheaders import DecodeError
    from kheaders.values import (
        BOOL,
        BYTES,
        FLOAT64,
        INT32,
        JSON,
        LONG,
        NULLABLE_STRING,
        STRING,
        TEXT,
        TEXT_LENIENT,
        UUID,
        VARINT,
        VARLONG,
        TaggedStruct,
        array,
        field,
        nullable_array,
        struct_type,
        tagged,
    )

_PLAIN_JSON = (dict, list, str, int, float, bool, type(None))


class Inner(TaggedStruct):
    name = field(STRING)
    note = tagged(0, NULLABLE_STRING, default=None)


class Outer(TaggedStruct, version=1):
    user = field(STRING)
    count = field(INT32)
    blob = field(BYTES)
    tags = field(array(STRING))
    maybe = field(nullable_array(VARINT))
    score = field(FLOAT64, since=1, default=0.0)
    inner = tagged(1, struct_type(Inner))
    when = tagged(2, LONG)
    id = tagged(3, UUID)


def _plain(value: object, depth: int = 0) -> bool:
    if type(value) not in _PLAIN_JSON:
        return False
    if isinstance(value, dict):
        return all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v, depth + 1) for v in value)
    return True


def check(data: bytes) -> None:
    for codec in (TEXT, LONG, VARLONG, UUID, BOOL):
        try:
            value = codec.decode(data)
        except DecodeError:
            continue
        assert codec.decode(codec.encode(value)) == value  # type: ignore[attr-defined]
    assert isinstance(TEXT_LENIENT.decode(data), str)  # lenient text never fails
    try:
        decoded = JSON.decode(data)
    except DecodeError:
        pass
    else:
        assert _plain(decoded), f"JSON decoded to a non-plain type: {type(decoded)}"
    for struct in (Outer, Inner):
        try:
            obj = struct.from_bytes(data)
        except DecodeError:
            continue
        encoded = obj.to_bytes()  # compared as bytes: a NaN field is not equal to itself
        assert struct.from_bytes(encoded).to_bytes() == encoded


if __name__ == "__main__":
    from tests.fuzz._harness import main

    main(check)
