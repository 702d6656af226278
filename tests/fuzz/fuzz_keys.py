"""Fuzz the header-key rule: any bytes, as a key in several forms, into the Headers model.

A key is either refused (TypeError for a non-str, InvalidNameError naming it) or accepted, and
an accepted key is one librdkafka can take intact (UTF-8, no NUL, not empty) and round-trips
through the record-v2 byte form. The produce side through a real broker is
``test_fuzz_produce_keys.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._harness import instrumented

with instrumented(__name__ == "__main__"):
    from kheaders import HeaderLimits, Headers, InvalidNameError
    from kheaders._model.keys import shown


def _keys(data: bytes) -> list[object]:
    return [
        data,  # bytes: never converted with str()
        data.decode("utf-8", "surrogateescape"),  # what os.fsdecode makes of it
        data.decode("latin-1"),  # any code point below 256, NUL included
        data.decode("utf-16-le", "surrogatepass") if len(data) % 2 == 0 else "",
    ]


def _refusal(key: object) -> tuple[type[Exception], str] | None:
    """The error Headers gives for ``key`` (type and message), or None when it accepts it."""
    try:
        Headers([(key, b"secret-value")])
    except (TypeError, InvalidNameError) as exc:
        return type(exc), str(exc)
    return None


def _sendable(key: str) -> bool:
    try:
        return bool(key) and b"\x00" not in key.encode("utf-8")
    except UnicodeEncodeError:
        return False


def check(data: bytes) -> None:
    for key in _keys(data):
        refused = _refusal(key)
        if refused is None:
            assert isinstance(key, str)
            assert _sendable(key), f"a key librdkafka cannot take was accepted: {key!r}"
            headers = Headers([(key, b"v")])
            assert Headers.from_bytes(headers.to_bytes()) == headers
            HeaderLimits(max_key_bytes=1 << 20).check(headers)
            continue
        kind, message = refused
        assert "secret-value" not in message
        if isinstance(key, str):
            assert kind is InvalidNameError
            assert not _sendable(key), f"a good key was refused: {key!r}"
            assert not key or shown(key) in message  # named by repr (cut at 64 characters)
        else:
            assert kind is TypeError


if __name__ == "__main__":
    from tests.fuzz._harness import main

    main(check)
