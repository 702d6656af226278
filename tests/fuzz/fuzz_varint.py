"""Fuzz the varint readers (unsigned, zigzag 32-bit, zigzag 64-bit) at every offset."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._harness import instrumented

with instrumented(__name__ == "__main__"):
    from kheaders import DecodeError
    from kheaders.wire import (
        read_unsigned_varint,
        read_varint,
        read_varlong,
        write_unsigned_varint,
        write_varint,
        write_varlong,
    )

_PAIRS = (
    (read_unsigned_varint, write_unsigned_varint, 5),
    (read_varint, write_varint, 5),
    (read_varlong, write_varlong, 10),
)


def check(data: bytes) -> None:
    for offset in range(min(len(data), 4) + 1):
        for read, write, max_bytes in _PAIRS:
            try:
                value, end = read(data, offset)
            except DecodeError:
                continue
            assert offset < end <= min(len(data), offset + max_bytes)
            assert read(write(value), 0)[0] == value


if __name__ == "__main__":
    from tests.fuzz._harness import main

    main(check)
