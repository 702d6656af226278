"""Typed header values: ready codecs and evolvable tagged structs.

>>> from kheaders import Headers
>>> h = Headers().add_value("attempt", 2, LONG).add_value("meta", {"ok": True}, JSON)
>>> h.last_value("attempt", LONG), h.last_value("meta", JSON)
(2, {'ok': True})
"""

from __future__ import annotations

from kheaders._codec import ValueCodec
from kheaders._values import (
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
    "JSON",
    "LONG",
    "TEXT",
    "TEXT_LENIENT",
    "UUID",
    "VARLONG",
    "BoolCodec",
    "JsonCodec",
    "JsonValue",
    "LongCodec",
    "TextCodec",
    "UuidCodec",
    "ValueCodec",
    "VarlongCodec",
]
