"""The contract every typed header-value codec meets."""

from __future__ import annotations

from typing import Protocol, TypeVar

T = TypeVar("T")


class ValueCodec(Protocol[T]):
    """Turns a Python value into header bytes and back.

    ``decode`` raises :class:`~kheaders.DecodeError` (and nothing else) on bytes it cannot
    read; ``encode`` raises ``TypeError``/``ValueError`` on a value it cannot represent.
    """

    name: str

    def encode(self, value: T) -> bytes: ...

    def decode(self, data: bytes) -> T: ...
