"""Typed header values: ready codecs and evolvable tagged structs.

Codecs (``TEXT``, ``LONG``, ``VARLONG``, ``UUID``, ``BOOL``, ``JSON``) turn one header value
into bytes and back. :class:`TaggedStruct` declares a versioned record of fields (types such
as ``STRING``, ``INT32``, ``array(STRING)``; ``LONG``, ``VARLONG``, ``UUID`` and ``BOOL`` work
as field types too) whose optional fields are KIP-482 tagged fields.

>>> from kheaders import Headers
>>> h = Headers().add_value("attempt", 2, LONG).add_value("meta", {"ok": True}, JSON)
>>> h.last_value("attempt", LONG), h.last_value("meta", JSON)
(2, {'ok': True})
"""

from kheaders import _public
from kheaders._codec.fieldtypes import (
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    NULLABLE_BYTES,
    NULLABLE_STRING,
    STRING,
    UVARINT,
    VARINT,
    FieldType,
    WireType,
    array,
    nullable_array,
)
from kheaders._codec.protocol import ValueCodec
from kheaders._codec.struct import (
    Field,
    StructCodec,
    TaggedStruct,
    field,
    struct_type,
    tagged,
)
from kheaders._codec.values import (
    BOOL,
    JSON,
    LONG,
    TEXT,
    TEXT_LENIENT,
    UUID,
    VARLONG,
    BoolCodec,
    JsonCodec,
    JsonValue,
    LongCodec,
    TextCodec,
    UuidCodec,
    VarlongCodec,
)

__all__ = [
    "BOOL",
    "BYTES",
    "FLOAT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "JSON",
    "LONG",
    "NULLABLE_BYTES",
    "NULLABLE_STRING",
    "STRING",
    "TEXT",
    "TEXT_LENIENT",
    "UUID",
    "UVARINT",
    "VARINT",
    "VARLONG",
    "BoolCodec",
    "Field",
    "FieldType",
    "JsonCodec",
    "JsonValue",
    "LongCodec",
    "StructCodec",
    "TaggedStruct",
    "TextCodec",
    "UuidCodec",
    "ValueCodec",
    "VarlongCodec",
    "WireType",
    "array",
    "field",
    "nullable_array",
    "struct_type",
    "tagged",
]
_public.claim(__name__, globals())
