"""Fuzz the record-v2 header section decoders: Headers.from_bytes and wire.read_headers."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._harness import instrumented

with instrumented(__name__ == "__main__"):
    from kheaders import DecodeError, Headers
    from kheaders.wire import read_headers


def check(data: bytes) -> None:
    try:
        headers = Headers.from_bytes(data)
    except DecodeError:
        pass
    else:  # what decodes, encodes back to something that decodes to the same headers
        assert Headers.from_bytes(headers.to_bytes()) == headers
        assert headers.encoded_size() == len(headers.to_bytes())
    try:
        parsed, end = read_headers(data, 0)
    except DecodeError:
        return
    assert 0 < end <= len(data)
    assert len(parsed.to_bytes()) <= end


if __name__ == "__main__":
    from tests.fuzz._harness import main

    main(check)
