"""Kafka wire forms: varints, KIP-482 compact types and tagged fields, the record-v2 header section.

Every writer returns ``bytes``; every reader takes ``(data, offset)`` and returns
``(value, next_offset)``. Encoding is byte-exact with Kafka's ``ByteUtils`` and generated
protocol code; decoding is strict and raises only :class:`~kheaders.DecodeError` (with the
byte offset) on malformed input. Writers raise ValueError for values out of range.

>>> write_unsigned_varint(300).hex(" "), write_varint(-1).hex(), write_varint(64).hex(" ")
('ac 02', '01', '80 01')
>>> data = write_compact_string("svc") + write_tagged_fields({0: b"eu"})
>>> name, pos = read_compact_string(data)
>>> name, read_tagged_fields(data, pos)
('svc', ({0: b'eu'}, 9))
"""

from __future__ import annotations

from kheaders import _public
from kheaders._codec.compact_types import (
    Buffer,
    read_compact_array,
    read_compact_bytes,
    read_compact_string,
    write_compact_array,
    write_compact_bytes,
    write_compact_string,
)
from kheaders._codec.tagged import read_tagged_fields, write_tagged_fields
from kheaders._codec.varint import (
    read_unsigned_varint,
    read_varint,
    read_varlong,
    varint_size,
    write_unsigned_varint,
    write_varint,
    write_varlong,
)
from kheaders._errors import DecodeError
from kheaders._model.headers import Headers, HeaderTypes, trusted
from kheaders._model.headerwire import decode_block

__all__ = [
    "Buffer",
    "DecodeError",
    "read_compact_array",
    "read_compact_bytes",
    "read_compact_string",
    "read_headers",
    "read_tagged_fields",
    "read_unsigned_varint",
    "read_varint",
    "read_varlong",
    "varint_size",
    "write_compact_array",
    "write_compact_bytes",
    "write_compact_string",
    "write_headers",
    "write_tagged_fields",
    "write_unsigned_varint",
    "write_varint",
    "write_varlong",
]


def write_headers(headers: HeaderTypes) -> bytes:
    """Encode headers (any accepted shape) as the record-batch v2 header section.

    >>> write_headers({"foo": b"value", "bar": None}).hex(" ")
    '04 06 66 6f 6f 0a 76 61 6c 75 65 06 62 61 72 01'

    Raises TypeError/ValueError (naming the key) for a bad key or value.
    """
    if type(headers) is not Headers:
        headers = Headers(headers)
    return headers.to_bytes()


def read_headers(data: Buffer, offset: int = 0) -> tuple[Headers, int]:
    """Decode a header section at ``offset`` (e.g. inside a record); return ``(headers, next)``.

    Unlike :meth:`Headers.from_bytes`, bytes after the section are allowed; the headers are
    writable.

    >>> read_headers(bytes.fromhex("02 02 61 01 ff"))
    (Headers([('a', None)]), 4)

    Raises DecodeError (with the offset) on a negative count or length, a length past the
    end of ``data``, or a key that is not UTF-8.
    """
    if offset < 0:
        raise DecodeError("negative offset", offset)
    view = data if type(data) is bytes else bytes(data)
    items, pos = decode_block(view, offset)
    return trusted(items, read_only=False), pos  # decode_block made every item a Header


_public.claim(__name__, globals())  # after the functions __all__ names
