"""Variable-length integers as Kafka writes them (``org.apache.kafka.common.utils.ByteUtils``).

Unsigned varints carry 7 bits a byte, least significant group first, high bit = "more".
Signed varints/varlongs are zigzag-encoded first, so small negative numbers stay short.
Encoding is byte-exact with Kafka; decoding is strict: an over-long or out-of-range encoding
and truncated input raise :class:`~kheaders.DecodeError` naming the offset, never ``IndexError``.
"""

from __future__ import annotations

from kheaders._errors import DecodeError

_U32_MAX = 0xFFFF_FFFF
_U64_MAX = 0xFFFF_FFFF_FFFF_FFFF
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1

# Every value below 2**14 pre-encoded: header counts and key/value lengths almost always are.
_SMALL: tuple[bytes, ...] = tuple(
    bytes((n,)) if n < 0x80 else bytes(((n & 0x7F) | 0x80, n >> 7)) for n in range(1 << 14)
)
_SMALL_LIMIT = 1 << 14


def _encode_unsigned(n: int) -> bytes:
    """Encode ``n >= 0`` (no range check): a table lookup below 2**14, else unrolled."""
    if n < _SMALL_LIMIT:
        return _SMALL[n]
    if n < 1 << 21:
        return bytes((n & 0x7F | 0x80, n >> 7 & 0x7F | 0x80, n >> 14))
    if n < 1 << 28:
        return bytes((n & 0x7F | 0x80, n >> 7 & 0x7F | 0x80, n >> 14 & 0x7F | 0x80, n >> 21))
    if n < 1 << 35:
        return bytes(
            (
                n & 0x7F | 0x80,
                n >> 7 & 0x7F | 0x80,
                n >> 14 & 0x7F | 0x80,
                n >> 21 & 0x7F | 0x80,
                n >> 28,
            )
        )
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _decode_unsigned(
    data: bytes | bytearray | memoryview, offset: int, max_bytes: int
) -> tuple[int, int]:
    """Decode at most ``max_bytes`` (5 or 10) varint bytes; the caller checks the range."""
    if offset < 0:
        raise DecodeError("negative offset", offset)
    try:
        b = data[offset]
        if b < 0x80:
            return b, offset + 1
        c = data[offset + 1]
        if c < 0x80:
            return b & 0x7F | c << 7, offset + 2
    except IndexError:
        raise DecodeError("truncated varint", offset) from None
    return _decode_rest(data, offset, b & 0x7F | (c & 0x7F) << 7, max_bytes)


def _decode_rest(
    data: bytes | bytearray | memoryview, offset: int, result: int, max_bytes: int
) -> tuple[int, int]:
    """Continue a varint whose first two bytes (``result``) both had the high bit set."""
    try:
        b = data[offset + 2]
        if b < 0x80:
            return result | b << 14, offset + 3
        result |= (b & 0x7F) << 14
        b = data[offset + 3]
        if b < 0x80:
            return result | b << 21, offset + 4
        result |= (b & 0x7F) << 21
        b = data[offset + 4]
        if b < 0x80:
            return result | b << 28, offset + 5
        result |= (b & 0x7F) << 28
        pos = offset + 5
        shift = 35
        while pos < offset + max_bytes:
            b = data[pos]
            pos += 1
            if b < 0x80:
                return result | b << shift, pos
            result |= (b & 0x7F) << shift
            shift += 7
    except IndexError:
        raise DecodeError("truncated varint", offset) from None
    raise DecodeError(f"varint longer than {max_bytes} bytes", offset)


def write_unsigned_varint(n: int) -> bytes:
    """Encode ``0 <= n < 2**32`` as an unsigned varint (1 to 5 bytes).

    >>> write_unsigned_varint(300).hex()
    'ac02'

    Raises ValueError when ``n`` is outside the unsigned 32-bit range.
    """
    if 0 <= n < _SMALL_LIMIT:
        return _SMALL[n]
    if not 0 <= n <= _U32_MAX:
        raise ValueError(f"unsigned varint out of range: {n}")
    return _encode_unsigned(n)


def _zigzag(n: int, bits: int) -> int:
    return ((n << 1) ^ (n >> (bits - 1))) & ((1 << bits) - 1)


def write_varint(n: int) -> bytes:
    """Zigzag-encode a signed 32-bit ``n`` (``-1`` is ``01``, ``64`` is ``80 01``).

    >>> write_varint(-(2**31)).hex(" ")
    'ff ff ff ff 0f'

    Raises ValueError when ``n`` is outside the signed 32-bit range.
    """
    if -8192 <= n < 8192:  # the pre-encoded table: header counts and lengths
        return _SMALL[(n << 1) ^ (n >> 31)]
    if not _I32_MIN <= n <= _I32_MAX:
        raise ValueError(f"varint out of 32-bit range: {n}")
    return _encode_unsigned(_zigzag(n, 32))


def write_varlong(n: int) -> bytes:
    """Zigzag-encode a signed 64-bit ``n`` (1 to 10 bytes): the timestamp delta
    of a record-v2 record, and KIP-280 versions in the ``varlong`` encoding.

    >>> write_varlong(-(2**63)).hex(" ")
    'ff ff ff ff ff ff ff ff ff 01'

    Raises ValueError when ``n`` is outside the signed 64-bit range.
    """
    if -8192 <= n < 8192:
        return _SMALL[(n << 1) ^ (n >> 63)]
    if not _I64_MIN <= n <= _I64_MAX:
        raise ValueError(f"varlong out of 64-bit range: {n}")
    return _encode_unsigned(_zigzag(n, 64))


def read_unsigned_varint(data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int]:
    """Decode an unsigned varint at ``offset``; return ``(value, next_offset)``.

    >>> read_unsigned_varint(bytes.fromhex("ac 02"))
    (300, 2)

    Raises DecodeError on truncated input, a 5th byte with its high bit set, or a value
    beyond 32 bits.
    """
    if 0 <= offset < len(data) and data[offset] < 0x80:  # one byte: most lengths and counts
        return data[offset], offset + 1
    value, end = _decode_unsigned(data, offset, 5)
    if value > _U32_MAX:
        raise DecodeError("unsigned varint exceeds 32 bits", offset)
    return value, end


def read_varint(data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int]:
    """Decode a zigzag varint at ``offset``; return ``(value, next_offset)``.

    >>> read_varint(b"\\x80\\x01")
    (64, 2)

    Raises DecodeError on truncated or over-long (more than 5 bytes) input.
    """
    if 0 <= offset < len(data) and (raw := data[offset]) < 0x80:  # one byte
        return (raw >> 1) ^ -(raw & 1), offset + 1
    raw, end = _decode_unsigned(data, offset, 5)
    if raw > _U32_MAX:
        raise DecodeError("varint exceeds 32 bits", offset)
    return (raw >> 1) ^ -(raw & 1), end


def read_varlong(data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int]:
    """Decode a zigzag varlong at ``offset``; return ``(value, next_offset)``.

    >>> read_varlong(bytes.fromhex("ff ff ff ff ff ff ff ff ff 01"))
    (-9223372036854775808, 10)

    Raises DecodeError on truncated or over-long (more than 10 bytes) input.
    """
    if 0 <= offset < len(data) and (raw := data[offset]) < 0x80:  # one byte
        return (raw >> 1) ^ -(raw & 1), offset + 1
    raw, end = _decode_unsigned(data, offset, 10)
    if raw > _U64_MAX:
        raise DecodeError("varlong exceeds 64 bits", offset)
    return (raw >> 1) ^ -(raw & 1), end


def varint_size(n: int) -> int:
    """Bytes that :func:`write_varint` uses for ``n`` (no range check; for size estimates)."""
    zz = ((n << 1) ^ (n >> 31)) & _U32_MAX
    size = 1
    while zz >= 0x80:
        zz >>= 7
        size += 1
    return size
