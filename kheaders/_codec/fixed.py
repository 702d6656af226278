"""Fixed-width big-endian numbers, Kafka's ``INT8``..``INT64`` and ``FLOAT64``: the one place
their byte layout, range and length checks are written.

Header value codecs (``LONG``), struct field types (``INT32``...), the built-in serializers
and KIP-280's version header all encode through these.

>>> INT64.write(-2).hex(" "), INT64.unpack(bytes(7) + b"\\x01"), INT64.read(b"\\x00" * 9, 1)
('ff ff ff ff ff ff ff fe', 1, (0, 9))
"""

from __future__ import annotations

import struct
from typing import Final, Generic, TypeVar

from kheaders._codec.compact_types import Buffer
from kheaders._errors import DecodeError

N = TypeVar("N", int, float)


class FixedWidth(Generic[N]):
    """One fixed-width type: ``write`` (checked), ``pack`` (range only), ``unpack``, ``read``.

    ``write`` raises TypeError for a value of another type (``bool`` included) and ValueError
    outside the range; ``unpack`` and ``read`` raise DecodeError naming the offset.
    """

    __slots__ = ("_float", "_struct", "name", "size")

    def __init__(self, name: str, fmt: str) -> None:
        self.name = name
        self._struct = struct.Struct(fmt)
        self.size = self._struct.size
        self._float = fmt.endswith("d")  # a double takes an int too

    def pack(self, value: N) -> bytes:
        """The bytes of ``value``, which must be of the right type already.

        Raises ValueError when it does not fit (out of range, or an int too large for a double).
        """
        try:
            return self._struct.pack(value)
        except (struct.error, OverflowError) as exc:
            raise ValueError(f"{self.name} value out of range: {value}") from exc

    def write(self, value: N, /) -> bytes:
        """Check the type of ``value``, then :meth:`pack` it. Raises TypeError/ValueError."""
        kind = type(value)
        if kind is not int and (kind is not float or not self._float):
            expected = "float" if self._float else "int"
            raise TypeError(f"{self.name} value must be {expected}, got {kind.__name__}")
        try:  # pack() inlined: struct fields and header values are written one call deep
            return self._struct.pack(value)
        except (struct.error, OverflowError) as exc:
            raise ValueError(f"{self.name} value out of range: {value}") from exc

    def unpack(self, data: Buffer) -> N:
        """The value in ``data``, which must be exactly :attr:`size` bytes long.

        Raises DecodeError for any other length.
        """
        if len(data) != self.size:
            raise DecodeError(
                f"{self.name} value needs exactly {self.size} bytes, got {len(data)}", 0
            )
        value: N = self._struct.unpack(data)[0]
        return value

    def read(self, data: Buffer, offset: int, /) -> tuple[N, int]:
        """Decode the value at ``offset``; return ``(value, next_offset)``.

        Raises DecodeError when fewer than :attr:`size` bytes are left.
        """
        end = offset + self.size
        if offset < 0 or end > len(data):
            raise DecodeError(f"truncated {self.name}: needs {self.size} bytes", offset)
        value: N = self._struct.unpack_from(data, offset)[0]
        return value, end


INT8: Final[FixedWidth[int]] = FixedWidth("int8", ">b")
INT16: Final[FixedWidth[int]] = FixedWidth("int16", ">h")
INT32: Final[FixedWidth[int]] = FixedWidth("int32", ">i")
INT64: Final[FixedWidth[int]] = FixedWidth("int64", ">q")
"""Kafka's ``LongSerializer`` layout: a signed 64-bit integer in 8 bytes, big-endian."""
FLOAT64: Final[FixedWidth[float]] = FixedWidth("float64", ">d")
"""IEEE 754 double, 8 bytes big-endian (Kafka's ``DoubleSerializer``)."""
