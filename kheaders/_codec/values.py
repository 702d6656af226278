"""Typed header values: codecs that turn Python values into header bytes and back.

Each codec meets :class:`~kheaders.ValueCodec`: ``encode`` raises TypeError/ValueError for a
value it cannot represent; ``decode`` raises :class:`~kheaders.DecodeError` and nothing
else, whatever the bytes.

>>> from kheaders import Headers
>>> h = Headers().add_value("retries", 3, LONG).add_value("ok", True, BOOL)
>>> h.last_value("retries", LONG), h.last_value("ok", BOOL)
(3, True)
"""

from __future__ import annotations

import json
import uuid
from typing import Final, Literal, TypeAlias

from kheaders._codec.compact_types import Buffer
from kheaders._codec.fixed import INT64
from kheaders._codec.varint import read_varlong, write_varlong
from kheaders._errors import DecodeError

JsonValue: TypeAlias = "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"
"""What :data:`JSON` encodes and decodes: plain JSON data, never instances of other classes."""


def _utf8(text: str, what: str) -> bytes:
    """``text`` as UTF-8. Raises ValueError naming ``what`` for lone surrogates."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} is not encodable as UTF-8: {exc.reason}") from exc


def _text(data: bytes, errors: str, what: str) -> str:
    """UTF-8 ``data`` as text. Raises DecodeError naming ``what`` (and the bad byte's offset)."""
    try:
        return str(data, "utf-8", errors)
    except UnicodeDecodeError as exc:
        raise DecodeError(f"{what} is not UTF-8: {exc.reason}", exc.start) from exc
    except TypeError as exc:
        raise DecodeError(f"cannot decode {type(data).__name__} as {what}") from exc


class TextCodec:
    """UTF-8 text. ``errors="strict"`` (default) rejects bad bytes; ``"replace"`` uses U+FFFD.

    >>> TEXT.encode("é"), TEXT_LENIENT.decode(b"caf\\xe9")
    (b'\\xc3\\xa9', 'caf�')

    ``decode`` raises DecodeError (strict mode) on bytes that are not UTF-8; ``encode`` raises
    TypeError for a non-``str`` and ValueError for text with lone surrogates.
    """

    __slots__ = ("errors", "name")

    def __init__(self, errors: Literal["strict", "replace"] = "strict") -> None:
        if errors not in ("strict", "replace"):
            raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
        self.errors = errors
        self.name = "text" if errors == "strict" else "text-lenient"

    def encode(self, value: str) -> bytes:
        """Encode ``value`` as UTF-8. Raises TypeError/ValueError as the class says."""
        if type(value) is not str and not isinstance(value, str):
            raise TypeError(f"{self.name} value must be str, got {type(value).__name__}")
        return _utf8(value, "text")

    def decode(self, data: bytes) -> str:
        """Decode UTF-8 ``data``. Raises DecodeError (strict mode) with the bad byte's offset."""
        return _text(data, self.errors, "text")

    def __repr__(self) -> str:
        return "TEXT" if self.errors == "strict" else "TEXT_LENIENT"


class LongCodec:
    """A signed 64-bit integer as 8 big-endian bytes (Kafka's ``LongSerializer`` layout).

    >>> LONG.encode(-2).hex(" "), LONG.decode(bytes(7) + b"\\x01")
    ('ff ff ff ff ff ff ff fe', 1)

    ``decode`` raises DecodeError unless given exactly 8 bytes; ``encode`` raises TypeError for
    a non-``int`` (``bool`` included) and ValueError outside the signed 64-bit range.
    """

    __slots__ = ()
    name: str = "long"

    def encode(self, value: int) -> bytes:
        """Encode ``value`` as 8 big-endian bytes. Raises TypeError/ValueError as above."""
        return INT64.write(value)

    def decode(self, data: bytes) -> int:
        """Decode exactly 8 big-endian bytes. Raises DecodeError for any other length."""
        return INT64.unpack(data)

    def write(self, value: int, /) -> bytes:
        """As :meth:`encode` (the struct-field form is the same 8 bytes)."""
        return INT64.write(value)

    def read(self, data: Buffer, offset: int, /) -> tuple[int, int]:
        """Decode 8 bytes at ``offset``; return ``(value, next)``. Raises DecodeError."""
        return INT64.read(data, offset)

    def __repr__(self) -> str:
        return "LONG"


class VarlongCodec:
    """A signed 64-bit integer as a zigzag varlong (1 to 10 bytes; KIP-280's broker patches).

    >>> VARLONG.encode(-1), VARLONG.decode(b"\\x80\\x01")
    (b'\\x01', 64)

    ``decode`` raises DecodeError on a malformed varlong or bytes left after it; ``encode``
    raises TypeError for a non-``int`` and ValueError outside the signed 64-bit range.
    """

    __slots__ = ()
    name: str = "varlong"

    def encode(self, value: int) -> bytes:
        """Zigzag-encode ``value``. Raises TypeError/ValueError as above."""
        if type(value) is not int:
            raise TypeError(f"varlong value must be int, got {type(value).__name__}")
        return write_varlong(value)

    def decode(self, data: bytes) -> int:
        """Decode one varlong that fills ``data``. Raises DecodeError as above."""
        value, pos = read_varlong(data, 0)
        if pos != len(data):
            raise DecodeError(f"{len(data) - pos} bytes left after the varlong", pos)
        return value

    def write(self, value: int, /) -> bytes:
        """As :meth:`encode` (a varlong delimits itself)."""
        return self.encode(value)

    def read(self, data: Buffer, offset: int, /) -> tuple[int, int]:
        """Decode a varlong at ``offset``; return ``(value, next)``. Raises DecodeError."""
        return read_varlong(data, offset)

    def __repr__(self) -> str:
        return "VARLONG"


class UuidCodec:
    """A :class:`uuid.UUID` as its 16 bytes (big-endian, as Kafka's ``Uuid``).

    >>> UUID.decode(UUID.encode(uuid.UUID(int=1)))
    UUID('00000000-0000-0000-0000-000000000001')

    ``decode`` raises DecodeError unless given exactly 16 bytes; ``encode`` raises TypeError
    for anything but a ``uuid.UUID``.
    """

    __slots__ = ()
    name: str = "uuid"

    def encode(self, value: uuid.UUID) -> bytes:
        """The 16 bytes of ``value``. Raises TypeError for a non-UUID."""
        if not isinstance(value, uuid.UUID):
            raise TypeError(f"uuid value must be uuid.UUID, got {type(value).__name__}")
        return value.bytes

    def decode(self, data: bytes) -> uuid.UUID:
        """The UUID in exactly 16 bytes. Raises DecodeError for any other length."""
        if len(data) != 16:
            raise DecodeError(f"uuid value needs exactly 16 bytes, got {len(data)}", 0)
        return uuid.UUID(bytes=bytes(data))

    def write(self, value: uuid.UUID, /) -> bytes:
        """As :meth:`encode` (always 16 bytes)."""
        return self.encode(value)

    def read(self, data: Buffer, offset: int, /) -> tuple[uuid.UUID, int]:
        """Decode 16 bytes at ``offset``; return ``(value, next)``. Raises DecodeError."""
        end = offset + 16
        if offset < 0 or end > len(data):
            raise DecodeError("truncated uuid: needs 16 bytes", offset)
        return uuid.UUID(bytes=bytes(data[offset:end])), end

    def __repr__(self) -> str:
        return "UUID"


class BoolCodec:
    """A boolean as one byte, ``00`` or ``01`` (Kafka's ``BOOLEAN`` type, read strictly).

    >>> BOOL.encode(True), BOOL.decode(b"\\x00")
    (b'\\x01', False)

    ``decode`` raises DecodeError for anything but exactly ``00`` or ``01``; ``encode`` raises
    TypeError for a non-``bool``.
    """

    __slots__ = ()
    name: str = "bool"

    def encode(self, value: bool) -> bytes:
        """``01`` for True, ``00`` for False. Raises TypeError for a non-bool."""
        if value is True:
            return b"\x01"
        if value is False:
            return b"\x00"
        raise TypeError(f"bool value must be bool, got {type(value).__name__}")

    def decode(self, data: bytes) -> bool:
        """Decode ``00``/``01``. Raises DecodeError for any other bytes."""
        if data == b"\x01":
            return True
        if data == b"\x00":
            return False
        raise DecodeError(f"bool value must be one byte 00 or 01, got {len(data)} bytes", 0)

    def write(self, value: bool, /) -> bytes:
        """As :meth:`encode` (always one byte)."""
        return self.encode(value)

    def read(self, data: Buffer, offset: int, /) -> tuple[bool, int]:
        """Decode one ``00``/``01`` byte at ``offset``. Raises DecodeError for other bytes."""
        if offset < 0 or offset >= len(data):
            raise DecodeError("truncated bool", offset)
        b = data[offset]
        if b > 1:
            raise DecodeError(f"bool byte must be 00 or 01, got {b:02x}", offset)
        return b == 1, offset + 1

    def __repr__(self) -> str:
        return "BOOL"


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


class JsonCodec:
    """Plain JSON data as compact UTF-8 JSON text; decoding never creates other classes.

    >>> JSON.encode({"a": [1, "é"]}), JSON.decode(b'{"a": null}')
    (b'{"a":[1,"\\xc3\\xa9"]}', {'a': None})

    ``decode`` raises DecodeError on bytes that are not UTF-8 JSON (``NaN``/``Infinity``
    included, and nesting too deep for the parser); ``encode`` raises TypeError for values
    JSON cannot hold and ValueError for NaN/infinity or circular references.
    """

    __slots__ = ()
    name: str = "json"

    def encode(self, value: JsonValue) -> bytes:
        """Compact JSON (no spaces) in UTF-8. Raises TypeError/ValueError as above."""
        try:
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except RecursionError as exc:
            raise ValueError("value nests too deeply for JSON") from exc
        return _utf8(text, "JSON text")

    def decode(self, data: bytes) -> JsonValue:
        """Parse UTF-8 JSON. Raises DecodeError (with the offset when known) as above."""
        text = _text(data, "strict", "JSON value")
        try:
            result: JsonValue = json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            # exc.pos counts characters; report the byte offset.
            offset = len(text[: exc.pos].encode("utf-8", "surrogatepass"))
            raise DecodeError(f"invalid JSON: {exc.msg}", offset) from exc
        except (ValueError, RecursionError) as exc:
            raise DecodeError(f"invalid JSON: {exc}") from exc
        return result

    def __repr__(self) -> str:
        return "JSON"


TEXT: Final = TextCodec()
"""Strict UTF-8 text."""
TEXT_LENIENT: Final = TextCodec(errors="replace")
"""UTF-8 text; undecodable bytes become U+FFFD instead of raising."""
LONG: Final = LongCodec()
"""Signed 64-bit integer, 8 bytes big-endian."""
VARLONG: Final = VarlongCodec()
"""Signed 64-bit integer, zigzag varlong."""
UUID: Final = UuidCodec()
"""``uuid.UUID``, 16 bytes."""
BOOL: Final = BoolCodec()
"""Boolean, one byte 00/01."""
JSON: Final = JsonCodec()
"""Plain JSON data, compact UTF-8."""
