"""KIP-482 tagged-field sections: optional fields that cost nothing when absent.

Layout: an unsigned varint count, then per field, in strictly ascending tag order, the tag
(unsigned varint), the data size (unsigned varint) and the data. No fields is one ``00`` byte.
Tags are 31-bit (``0 <= tag < 2**31``), as in Kafka.
"""

from __future__ import annotations

from collections.abc import Mapping

from kheaders._codec.compact_types import Buffer
from kheaders._codec.varint import _decode_unsigned, _encode_unsigned
from kheaders._errors import DecodeError

_MAX_TAG = (1 << 31) - 1
_MAX_SIZE = (1 << 31) - 1


def write_tagged_fields(fields: Mapping[int, Buffer]) -> bytes:
    """Encode ``{tag: data}`` as a tagged-field section (tags sorted ascending).

    >>> write_tagged_fields({}).hex(), write_tagged_fields({1: b"b", 0: b"a"}).hex(" ")
    ('00', '02 00 01 61 01 01 62')

    Raises TypeError for a tag that is not ``int`` or data that is not bytes-like,
    ValueError for a tag outside ``0..2**31-1`` or data longer than ``2**31-1`` bytes.
    """
    if not fields:
        return b"\x00"
    parts = [_encode_unsigned(len(fields))]
    append = parts.append
    for tag in sorted(fields):
        if type(tag) is not int:
            raise TypeError(f"tag must be int, got {type(tag).__name__} {tag!r}")
        if not 0 <= tag <= _MAX_TAG:
            raise ValueError(f"tag {tag} outside 0..2**31-1")
        data = fields[tag]
        if type(data) is not bytes:
            if not isinstance(data, bytes | bytearray | memoryview):
                raise TypeError(f"tag {tag}: data must be bytes-like, got {type(data).__name__}")
            data = bytes(data)
        if len(data) > _MAX_SIZE:
            raise ValueError(f"tag {tag}: data too long ({len(data)} bytes)")
        append(_encode_unsigned(tag))
        append(_encode_unsigned(len(data)))
        append(data)
    return b"".join(parts)


def read_tagged_fields(data: Buffer, offset: int = 0) -> tuple[dict[int, bytes], int]:
    """Decode a tagged-field section at ``offset``; return ``({tag: data}, next_offset)``.

    >>> read_tagged_fields(bytes.fromhex("02 00 01 61 01 01 62"))
    ({0: b'a', 1: b'b'}, 7)

    Raises DecodeError (with the offset) on truncated input, a count larger than the input
    could hold, a tag out of ascending order or repeated, or a size past the end.
    """
    spans, pos = tagged_field_spans(data, offset)
    return {tag: bytes(data[start:end]) for tag, (start, end) in spans.items()}, pos


def tagged_field_spans(data: Buffer, offset: int = 0) -> tuple[dict[int, tuple[int, int]], int]:
    """:func:`read_tagged_fields` giving where each field's data lies instead of a copy:
    ``({tag: (start, end)}, next_offset)``, positions absolute in ``data``, so decoding a
    field's bytes can name offsets in the caller's buffer. Raises as read_tagged_fields.
    """
    end = len(data)
    if 0 <= offset < end and data[offset] == 0:
        return {}, offset + 1
    count, pos = _decode_unsigned(data, offset, 5)
    # Each field takes at least two bytes (tag and size): a bigger count is a lie.
    if count > (end - pos) // 2:
        raise DecodeError(
            f"tagged-field count {count} exceeds what {end - pos} bytes can hold", offset
        )
    fields: dict[int, tuple[int, int]] = {}
    previous = -1
    for _ in range(count):
        at = pos
        if pos < end and (tag := data[pos]) < 0x80:  # one byte: the usual tag and size
            pos += 1
        else:
            tag, pos = _decode_unsigned(data, pos, 5)
        if tag > _MAX_TAG:
            raise DecodeError(f"tag {tag} exceeds 2**31-1", at)
        if tag <= previous:
            what = "repeated" if tag == previous else "out of ascending order"
            raise DecodeError(f"tag {tag} {what} (after tag {previous})", at)
        previous = tag
        size_at = pos
        if pos < end and (size := data[pos]) < 0x80:
            pos += 1
        else:
            size, pos = _decode_unsigned(data, pos, 5)
        if size > end - pos:
            raise DecodeError(
                f"tag {tag}: size {size} runs past the end ({end - pos} bytes left)", size_at
            )
        fields[tag] = (pos, pos + size)
        pos += size
    return fields, pos
