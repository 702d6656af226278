"""Field types for tagged structs: how one field value is written and read.

Each :class:`FieldType` pairs a writer ``value -> bytes`` (TypeError/ValueError for a value it
cannot hold) with a reader ``(data, offset) -> (value, next_offset)`` (DecodeError only).
Strings, bytes and arrays use the KIP-482 compact forms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Generic, Protocol, TypeVar

from kheaders._codec import fixed
from kheaders._codec.compact_types import (
    Buffer,
    read_compact_array,
    read_compact_bytes,
    read_compact_string,
    write_compact_array,
    write_compact_bytes,
    write_compact_string,
)
from kheaders._codec.fixed import FixedWidth
from kheaders._codec.varint import (
    read_unsigned_varint,
    read_varint,
    write_unsigned_varint,
    write_varint,
)
from kheaders._errors import DecodeError

T = TypeVar("T")
N = TypeVar("N", int, float)


class WireType(Protocol[T]):
    """What a struct field needs: a self-delimiting writer and reader.

    Every :class:`FieldType` is one, and so are the ``LONG``, ``VARLONG``, ``UUID`` and
    ``BOOL`` value codecs (their header form is already self-delimiting).
    """

    name: str

    def write(self, value: T, /) -> bytes: ...

    def read(self, data: Buffer, offset: int, /) -> tuple[T, int]: ...


class FieldType(Generic[T]):
    """A struct field type; also a :class:`~kheaders.values.ValueCodec` for whole header values.

    >>> from kheaders import Headers
    >>> Headers().add_value("n", 7, INT32).last_value("n", INT32)
    7

    ``read``/``decode`` raise only DecodeError; ``write``/``encode`` raise TypeError or
    ValueError for a value the type cannot hold.
    """

    __slots__ = ("_read", "_write", "name")

    def __init__(
        self,
        name: str,
        write: Callable[[T], bytes],
        read: Callable[[Buffer, int], tuple[T, int]],
    ) -> None:
        self.name = name
        self._write = write
        self._read = read

    def write(self, value: T, /) -> bytes:
        """Encode ``value`` (self-delimiting)."""
        return self._write(value)

    def read(self, data: Buffer, offset: int, /) -> tuple[T, int]:
        """Decode one value at ``offset``; return ``(value, next_offset)``."""
        return self._read(data, offset)

    def encode(self, value: T) -> bytes:
        """The header-value form: the same bytes as :meth:`write`."""
        return self._write(value)

    def decode(self, data: bytes) -> T:
        """Decode a whole header value. Raises DecodeError also when bytes are left over."""
        value, pos = self._read(data, 0)
        if pos != len(data):
            raise DecodeError(f"{len(data) - pos} bytes left after the {self.name}", pos)
        return value

    def __repr__(self) -> str:
        return self.name.upper()


def _fixed(width: FixedWidth[N]) -> FieldType[N]:
    return FieldType(width.name, width.write, width.read)


def _checked_int(name: str, write: Callable[[int], bytes]) -> Callable[[int], bytes]:
    def checked(value: int) -> bytes:
        if type(value) is not int:
            raise TypeError(f"{name} value must be int, got {type(value).__name__}")
        return write(value)

    return checked


def _not_null(name: str, write: Callable[[T | None], bytes]) -> Callable[[T], bytes]:
    def checked(value: T) -> bytes:
        if value is None:
            raise TypeError(f"{name} value must not be None (use the NULLABLE_ type)")
        return write(value)

    return checked


def _required(
    name: str, read: Callable[[Buffer, int], tuple[T | None, int]]
) -> Callable[[Buffer, int], tuple[T, int]]:
    def checked(data: Buffer, offset: int) -> tuple[T, int]:
        value, pos = read(data, offset)
        if value is None:
            raise DecodeError(f"null where a non-null {name} is required", offset)
        return value, pos

    return checked


INT8: Final = _fixed(fixed.INT8)
"""Signed 8-bit integer, 1 byte."""
INT16: Final = _fixed(fixed.INT16)
"""Signed 16-bit integer, 2 bytes big-endian."""
INT32: Final = _fixed(fixed.INT32)
"""Signed 32-bit integer, 4 bytes big-endian."""
INT64: Final = _fixed(fixed.INT64)
"""Signed 64-bit integer, 8 bytes big-endian."""
UVARINT: Final = FieldType(
    "uvarint", _checked_int("uvarint", write_unsigned_varint), read_unsigned_varint
)
"""Unsigned 32-bit integer as an unsigned varint (1-5 bytes)."""
VARINT: Final = FieldType("varint", _checked_int("varint", write_varint), read_varint)
"""Signed 32-bit integer as a zigzag varint (1-5 bytes)."""
FLOAT64: Final = _fixed(fixed.FLOAT64)
"""IEEE 754 double, 8 bytes big-endian."""
STRING: Final = FieldType(
    "string", _not_null("string", write_compact_string), _required("string", read_compact_string)
)
"""UTF-8 text as a KIP-482 COMPACT_STRING (never null)."""
NULLABLE_STRING: Final = FieldType("nullable_string", write_compact_string, read_compact_string)
"""UTF-8 text or ``None`` as a COMPACT_NULLABLE_STRING."""
BYTES: Final = FieldType(
    "bytes", _not_null("bytes", write_compact_bytes), _required("bytes", read_compact_bytes)
)
"""Bytes as KIP-482 COMPACT_BYTES (never null)."""
NULLABLE_BYTES: Final = FieldType("nullable_bytes", write_compact_bytes, read_compact_bytes)
"""Bytes or ``None`` as COMPACT_NULLABLE_BYTES."""


def array(item: WireType[T]) -> FieldType[list[T]]:
    """A KIP-482 COMPACT_ARRAY of ``item`` values (never null); arrays may nest.

    >>> t = array(array(INT8))
    >>> t.write([[1], []]).hex(" "), t.read(bytes.fromhex("03 02 01 01"), 0)
    ('03 02 01 01', ([[1], []], 4))

    The writer raises TypeError for a non-sequence (a ``str`` or ``bytes`` included).
    """
    name = f"array[{item.name}]"

    def write(values: list[T]) -> bytes:
        if not isinstance(values, list | tuple):
            raise TypeError(f"{name} value must be a list or tuple, got {type(values).__name__}")
        return write_compact_array(values, item.write)

    def read(data: Buffer, offset: int) -> tuple[list[T], int]:
        values, pos = read_compact_array(data, offset, item.read)
        if values is None:
            raise DecodeError(f"null where a non-null {name} is required", offset)
        return values, pos

    return FieldType(name, write, read)


def nullable_array(item: WireType[T]) -> FieldType[list[T] | None]:
    """Like :func:`array`, but ``None`` is allowed (written as length 0)."""
    inner = array(item)

    def write(values: list[T] | None) -> bytes:
        return b"\x00" if values is None else inner.write(values)

    def read(data: Buffer, offset: int) -> tuple[list[T] | None, int]:
        return read_compact_array(data, offset, item.read)

    return FieldType(f"nullable_{inner.name}", write, read)
