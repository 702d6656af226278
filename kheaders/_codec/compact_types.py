"""KIP-482 compact types: strings, bytes and arrays whose length is an unsigned varint + 1.

A length field of 0 means null, 1 means empty, ``n + 1`` means ``n`` bytes (or items).
Lengths above ``2**31 - 2`` are rejected on both sides, as Kafka reads them into a Java ``int``.
Decoders check every length against the bytes actually left before touching them, so a lying
length fails fast with :class:`~kheaders.DecodeError` and allocates nothing.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import TypeAlias, TypeVar

from kheaders._codec.varint import _decode_unsigned, _encode_unsigned
from kheaders._errors import DecodeError

T = TypeVar("T")

Buffer: TypeAlias = bytes | bytearray | memoryview
"""Byte sources the decoders read from."""

_MAX_LENGTH = (1 << 31) - 2
_NULL = b"\x00"


def _read_length(data: Buffer, offset: int, what: str) -> tuple[int, int]:
    """Read a compact length field; return ``(length, next)`` with ``-1`` for null."""
    if 0 <= offset < len(data) and data[offset] < 0x80:
        raw, pos = data[offset], offset + 1
    else:
        raw, pos = _decode_unsigned(data, offset, 5)
    if raw > _MAX_LENGTH + 1:
        raise DecodeError(f"{what} length {raw - 1} exceeds 2**31 - 2", offset)
    return raw - 1, pos


def _read_sized(data: Buffer, offset: int, what: str) -> tuple[bytes | None, int]:
    length, pos = _read_length(data, offset, what)
    if length < 0:
        return None, pos
    end = pos + length
    if end > len(data):
        raise DecodeError(
            f"{what} of {length} bytes runs past the end ({len(data) - pos} bytes left)", offset
        )
    return bytes(data[pos:end]), end


def write_compact_bytes(value: Buffer | None) -> bytes:
    """Encode bytes (or ``None``) as COMPACT_(NULLABLE_)BYTES.

    >>> write_compact_bytes(b"hi").hex(" "), write_compact_bytes(None), write_compact_bytes(b"")
    ('03 68 69', b'\\x00', b'\\x01')

    Raises TypeError for a value that is not bytes-like, ValueError when it is too long.
    """
    if value is None:
        return _NULL
    if type(value) is not bytes:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise TypeError(f"compact bytes must be bytes-like or None, got {type(value).__name__}")
        value = bytes(value)
    n = len(value)
    if n > _MAX_LENGTH:
        raise ValueError(f"compact bytes too long: {n} bytes")
    return _encode_unsigned(n + 1) + value


def read_compact_bytes(data: Buffer, offset: int = 0) -> tuple[bytes | None, int]:
    """Decode COMPACT_(NULLABLE_)BYTES at ``offset``; return ``(value, next_offset)``.

    >>> read_compact_bytes(b"\\x03hi!")
    (b'hi', 3)

    Raises DecodeError on truncated input or a length past the end of ``data``.
    """
    return _read_sized(data, offset, "compact bytes")


def write_compact_string(value: str | None) -> bytes:
    """Encode text (or ``None``) as UTF-8 COMPACT_(NULLABLE_)STRING.

    >>> write_compact_string("héllo").hex(" ")
    '07 68 c3 a9 6c 6c 6f'

    Raises TypeError for a value that is not ``str``, ValueError when it is too long or
    holds lone surrogates (not encodable as UTF-8).
    """
    if value is None:
        return _NULL
    if not isinstance(value, str):
        raise TypeError(f"compact string must be str or None, got {type(value).__name__}")
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"string is not encodable as UTF-8: {exc.reason}") from exc
    n = len(raw)
    if n > _MAX_LENGTH:
        raise ValueError(f"compact string too long: {n} bytes")
    return _encode_unsigned(n + 1) + raw


def read_compact_string(data: Buffer, offset: int = 0) -> tuple[str | None, int]:
    """Decode a UTF-8 COMPACT_(NULLABLE_)STRING at ``offset``; return ``(value, next_offset)``.

    >>> read_compact_string(bytes.fromhex("00 03 6f 6b"), 1)
    ('ok', 4)

    Raises DecodeError on truncated input, a length past the end, or bytes that are not UTF-8.
    """
    length, pos = _read_length(data, offset, "compact string")
    if length < 0:
        return None, pos
    end = pos + length
    if end > len(data):
        raise DecodeError(
            f"compact string of {length} bytes runs past the end ({len(data) - pos} bytes left)",
            offset,
        )
    try:
        return str(data[pos:end], "utf-8"), end
    except UnicodeDecodeError as exc:
        raise DecodeError(f"compact string is not UTF-8: {exc.reason}", pos + exc.start) from exc


def write_compact_array(items: Iterable[T] | None, write_item: Callable[[T], bytes]) -> bytes:
    """Encode a COMPACT_ARRAY: item count + 1, then each item as ``write_item`` encodes it.

    >>> from kheaders.wire import write_varint
    >>> write_compact_array([1, -1], write_varint).hex(" "), write_compact_array(None, write_varint)
    ('03 02 01', b'\\x00')

    Raises ValueError when there are too many items; whatever ``write_item`` raises.
    """
    if items is None:
        return _NULL
    parts = [write_item(item) for item in items]
    n = len(parts)
    if n > _MAX_LENGTH:
        raise ValueError(f"compact array too long: {n} items")
    return _encode_unsigned(n + 1) + b"".join(parts)


def read_compact_array(
    data: Buffer, offset: int, read_item: Callable[[Buffer, int], tuple[T, int]]
) -> tuple[list[T] | None, int]:
    """Decode a COMPACT_ARRAY at ``offset`` with ``read_item(data, pos) -> (item, next_pos)``.

    Every item must take at least one byte (as in Kafka), so a count larger than the bytes left
    is rejected before any item is read.

    >>> from kheaders.wire import read_varint
    >>> read_compact_array(bytes.fromhex("03 02 01"), 0, read_varint)
    ([1, -1], 3)

    Raises DecodeError on a bad count or truncated input; an ``IndexError``, ``struct.error``
    or ``ValueError`` from ``read_item`` is turned into DecodeError too.
    """
    count, pos = _read_length(data, offset, "compact array")
    if count < 0:
        return None, pos
    end = len(data)
    if count > end - pos:
        raise DecodeError(f"compact array of {count} items but only {end - pos} bytes left", offset)
    items: list[T] = []
    append = items.append
    for index in range(count):
        at = pos
        try:
            item, pos = read_item(data, pos)
        except DecodeError:
            raise
        except (IndexError, ValueError, struct.error) as exc:
            raise DecodeError(f"compact array item {index}: {exc}", at) from exc
        if pos <= at or pos > end:
            raise DecodeError(f"compact array item {index} took no bytes or ran past the end", at)
        append(item)
    return items, pos
