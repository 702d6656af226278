"""Fuzz KIP-482 readers: compact strings, bytes, arrays (of varints and strings), tagged fields."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._harness import instrumented

with instrumented(__name__ == "__main__"):
    from kheaders import DecodeError
    from kheaders.wire import (
        read_compact_array,
        read_compact_bytes,
        read_compact_string,
        read_tagged_fields,
        read_varint,
    )


def _read_all(data: bytes) -> None:
    for read in (read_compact_string, read_compact_bytes, read_tagged_fields):
        try:
            _, end = read(data, 0)  # type: ignore[operator]
        except DecodeError:
            continue
        assert 0 < end <= len(data)
    for item in (read_varint, read_compact_string, read_tagged_fields):
        try:
            _, end = read_compact_array(data, 0, item)  # type: ignore[arg-type]
        except DecodeError:
            continue
        assert 0 < end <= len(data)


def check(data: bytes) -> None:
    _read_all(data)
    if data:
        _read_all(data[1:])


if __name__ == "__main__":
    from tests.fuzz._harness import main

    main(check)
