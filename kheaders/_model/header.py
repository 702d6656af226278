"""The :class:`Header` pair (its own module so the headers model and its wire form share it)."""

from __future__ import annotations

from typing import NamedTuple

from kheaders._model.redact import redacted_repr


class Header(NamedTuple):
    """One header: a text ``key`` and a ``value`` of bytes, or ``None`` for a null header.

    It is a 2-tuple, so code written for confluent-kafka's ``[(key, value), ...]`` keeps
    working (``for k, v in headers``, ``dict(headers)``).

    >>> k, v = Header("a", b"1")
    >>> (k, v) == Header("a", b"1"), dict([Header("a", b"1")])
    (True, {'a': b'1'})
    """

    key: str
    value: bytes | None

    def __repr__(self) -> str:
        """The usual NamedTuple repr, a sensitive value shown as ``<redacted>``."""
        return f"Header(key={self[0]!r}, value={redacted_repr(self[0], self[1])})"
