"""Built-in serializers for bytes, text and numbers, in Kafka's own byte layouts.

Each one meets :class:`~kheaders.Serializer` / :class:`~kheaders.Deserializer`, keeps its
settings fixed at construction, and maps ``None`` to a null key/value and back. Errors name
the topic: ``TypeError`` for a value of the wrong type, ``ValueError`` for one out of range,
:class:`~kheaders.DecodeError` for bytes that do not decode.
"""

from __future__ import annotations

import codecs
from typing import Generic, TypeVar

from kheaders._codec.fixed import FLOAT64, INT32, INT64, FixedWidth
from kheaders._errors import DecodeError
from kheaders._model.headers import Headers
from kheaders._serde.protected import explained

CONTENT_TYPE = "content-type"
"""The header content-type aware serializers write and ContentTypeDeserializer reads."""

N = TypeVar("N", int, float)


def _type_error(topic: str, expected: str, data: object) -> TypeError:
    return TypeError(f"topic {topic!r}: expected {expected} or None, got {type(data).__name__}")


class BytesSerializer:
    """Passes ``bytes`` through (``bytearray``/``memoryview`` are copied to ``bytes``).

    >>> BytesSerializer().serialize("t", Headers(), bytearray(b"hi"))
    b'hi'

    Raises TypeError (naming the topic) for anything else, ``str`` included.
    """

    __slots__ = ()

    def serialize(self, topic: str, headers: Headers, data: object) -> bytes | None:
        if type(data) is bytes or data is None:
            return data
        if isinstance(data, bytes | bytearray | memoryview):
            return bytes(data)
        raise _type_error(topic, "bytes, bytearray or memoryview", data)


class BytesDeserializer:
    """Returns the record's bytes unchanged (``None`` for a null key/value)."""

    __slots__ = ()

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> bytes | None:
        return data


class StringSerializer:
    """Encodes ``str`` with ``encoding`` (UTF-8 by default).

    With ``content_type=True`` it also sets ``content-type: text/plain; charset=<encoding>``,
    replacing any earlier ``content-type``; a ``str`` gives the header value to set instead.

    >>> h = Headers()
    >>> StringSerializer(content_type=True).serialize("t", h, "héllo")
    b'h\\xc3\\xa9llo'
    >>> h.last_value("content-type")
    b'text/plain; charset=utf-8'

    Raises LookupError for an unknown encoding; per record, TypeError for a non-``str`` and
    ValueError (naming the topic) for text the encoding cannot represent.
    """

    __slots__ = ("_content_type", "_encoding", "_errors", "_header")

    def __init__(
        self,
        encoding: str = "utf-8",
        *,
        errors: str = "strict",
        content_type: bool | str = False,
        header: str = CONTENT_TYPE,
    ) -> None:
        self._encoding = codecs.lookup(encoding).name
        self._errors = errors
        self._header = header
        if content_type is True:
            content_type = f"text/plain; charset={self._encoding}"
        self._content_type = content_type.encode("utf-8") if content_type else None

    def serialize(self, topic: str, headers: Headers, data: object) -> bytes | None:
        if type(data) is not str:
            if data is None:
                return None
            if not isinstance(data, str):
                raise _type_error(topic, "str", data)
        try:
            encoded = data.encode(self._encoding, self._errors)
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"topic {topic!r}: character {exc.start} cannot be encoded as {self._encoding}"
            ) from exc
        if self._content_type is not None:
            headers.set(self._header, self._content_type)
        return encoded


class StringDeserializer:
    """Decodes bytes with ``encoding`` (UTF-8 by default).

    >>> StringDeserializer().deserialize("t", Headers(), b"h\\xc3\\xa9llo")
    'héllo'

    Raises LookupError for an unknown encoding; per record, DecodeError (naming the topic,
    with the byte offset) for bytes that are not valid in the encoding.
    """

    __slots__ = ("_encoding", "_errors")

    def __init__(self, encoding: str = "utf-8", *, errors: str = "strict") -> None:
        self._encoding = codecs.lookup(encoding).name
        self._errors = errors

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> str | None:
        if data is None:
            return None
        try:
            return data.decode(self._encoding, self._errors)
        except UnicodeDecodeError as exc:
            raise DecodeError(
                explained(topic, f"not valid {self._encoding}: {exc.reason}", headers),
                exc.start,
            ) from exc


def _check_int(topic: str, data: object) -> int:
    if type(data) is int:
        return data
    if isinstance(data, int) and not isinstance(data, bool):
        return int(data)
    raise _type_error(topic, "int", data)


class _FixedIntSerializer:
    """Kafka's Integer/LongSerializer: an ``int`` in ``_width`` bytes, big-endian."""

    __slots__ = ()
    _width: FixedWidth[int]

    def serialize(self, topic: str, headers: Headers, data: object) -> bytes | None:
        if data is None:
            return None
        value = _check_int(topic, data)
        try:
            return self._width.write(value)
        except ValueError as exc:
            bits = self._width.size * 8
            raise ValueError(
                f"topic {topic!r}: {value} does not fit in a {bits}-bit integer"
            ) from exc


class IntegerSerializer(_FixedIntSerializer):
    """Encodes an ``int`` as 4 bytes, big-endian two's complement (Kafka's IntegerSerializer).

    >>> IntegerSerializer().serialize("t", Headers(), -2).hex()
    'fffffffe'

    Raises TypeError for a non-``int`` (``bool`` included), ValueError outside int32.
    """

    __slots__ = ()
    _width = INT32


class LongSerializer(_FixedIntSerializer):
    """Encodes an ``int`` as 8 bytes, big-endian two's complement (Kafka's LongSerializer).

    >>> LongSerializer().serialize("t", Headers(), 1).hex()
    '0000000000000001'

    Raises TypeError for a non-``int`` (``bool`` included), ValueError outside int64.
    """

    __slots__ = ()
    _width = INT64


class DoubleSerializer:
    """Encodes a ``float`` (or ``int``) as 8-byte big-endian IEEE 754 (Kafka's DoubleSerializer).

    >>> DoubleSerializer().serialize("t", Headers(), 1.5).hex()
    '3ff8000000000000'

    Raises TypeError for anything else (``bool`` included), OverflowError for an ``int``
    too large for a double.
    """

    __slots__ = ()

    def serialize(self, topic: str, headers: Headers, data: object) -> bytes | None:
        if type(data) is float:
            return FLOAT64.write(data)
        if data is None:
            return None
        if isinstance(data, float | int) and not isinstance(data, bool):
            try:
                return FLOAT64.pack(float(data))
            except (OverflowError, ValueError) as exc:
                raise OverflowError(f"topic {topic!r}: {data} is too large for a double") from exc
        raise _type_error(topic, "float", data)


class _FixedDeserializer(Generic[N]):
    """Kafka's Integer/Long/DoubleDeserializer: exactly ``_width`` bytes, big-endian."""

    __slots__ = ()
    _width: FixedWidth[N]
    _what: str

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> N | None:
        if data is None:
            return None
        try:
            return self._width.unpack(data)
        except DecodeError as exc:
            failure = f"{self._what} needs exactly {self._width.size} bytes, got {len(data)}"
            raise DecodeError(explained(topic, failure, headers), 0) from exc


class IntegerDeserializer(_FixedDeserializer[int]):
    """Decodes exactly 4 big-endian bytes into an ``int``.

    Raises DecodeError (naming the topic) for any other length.
    """

    __slots__ = ()
    _width = INT32
    _what = "a 32-bit integer"


class LongDeserializer(_FixedDeserializer[int]):
    """Decodes exactly 8 big-endian bytes into an ``int``.

    Raises DecodeError (naming the topic) for any other length.
    """

    __slots__ = ()
    _width = INT64
    _what = "a 64-bit integer"


class DoubleDeserializer(_FixedDeserializer[float]):
    """Decodes exactly 8 big-endian IEEE 754 bytes into a ``float``.

    Raises DecodeError (naming the topic) for any other length.
    """

    __slots__ = ()
    _width = FLOAT64
    _what = "a double"
