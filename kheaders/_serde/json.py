"""JSON serde and the deserializer that dispatches on a record's ``content-type`` header."""

from __future__ import annotations

import json
from collections.abc import Mapping

from kheaders._errors import DecodeError
from kheaders._model.headers import Headers
from kheaders._serde.builtin import CONTENT_TYPE
from kheaders._serde.protocols import Deserializer


class JsonSerializer:
    """Encodes a value as compact UTF-8 JSON; ``None`` gives a null record (a tombstone).

    With ``content_type=True`` (the default) it sets ``content-type: application/json``,
    replacing any earlier ``content-type`` header; a ``str`` sets that value instead (e.g.
    ``"application/vnd.order+json"``); ``False`` leaves the headers alone.

    >>> h = Headers([("content-type", b"text/plain")])
    >>> JsonSerializer().serialize("t", h, {"id": 7, "tags": ["a"]})
    b'{"id":7,"tags":["a"]}'
    >>> h
    Headers([('content-type', b'application/json')])

    Raises TypeError (naming the topic) for a value JSON cannot represent, ValueError for
    NaN or infinity (not JSON) and for circular references.
    """

    __slots__ = ("_content_type", "_encode", "_header")

    def __init__(
        self,
        content_type: bool | str = True,
        *,
        sort_keys: bool = False,
        header: str = CONTENT_TYPE,
    ) -> None:
        self._encode = json.JSONEncoder(
            ensure_ascii=False, allow_nan=False, separators=(",", ":"), sort_keys=sort_keys
        ).encode
        if content_type is True:
            content_type = "application/json"
        self._content_type = content_type.encode("utf-8") if content_type else None
        self._header = header

    def serialize(self, topic: str, headers: Headers, data: object) -> bytes | None:
        if data is None:
            return None
        try:
            text = self._encode(data)
        except TypeError as exc:
            raise TypeError(f"topic {topic!r}: cannot encode as JSON: {exc}") from exc
        except ValueError as exc:
            raise ValueError(f"topic {topic!r}: cannot encode as JSON: {exc}") from exc
        if self._content_type is not None:
            headers.set(self._header, self._content_type)
        return text.encode("utf-8")


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


class JsonDeserializer:
    """Decodes UTF-8 JSON into plain dicts, lists, strings, numbers, booleans and ``None``.

    No hooks, no classes: what arrives is data, never code. ``NaN``/``Infinity`` are
    rejected (they are not JSON).

    >>> JsonDeserializer().deserialize("t", Headers(), b'{"id":7}')
    {'id': 7}

    Raises DecodeError (naming the topic, with the byte offset) for bytes that are not UTF-8
    or not JSON, and for nesting too deep to decode.
    """

    __slots__ = ("_decode",)

    def __init__(self) -> None:
        self._decode = json.JSONDecoder(parse_constant=_reject_constant).decode

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> object:
        if data is None:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(
                f"topic {topic!r}: JSON is not UTF-8: {exc.reason}", exc.start
            ) from exc
        try:
            return self._decode(text)
        except json.JSONDecodeError as exc:
            offset = len(text[: exc.pos].encode("utf-8"))
            raise DecodeError(f"topic {topic!r}: invalid JSON: {exc.msg}", offset) from exc
        except ValueError as exc:
            raise DecodeError(f"topic {topic!r}: invalid JSON: {exc}") from exc
        except RecursionError as exc:
            raise DecodeError(f"topic {topic!r}: JSON nested too deeply to decode") from exc


def media_type(value: bytes | str) -> str:
    """The media type of a ``content-type`` value: parameters dropped, lower case.

    >>> media_type(b"Application/JSON; charset=utf-8")
    'application/json'
    """
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.split(";", 1)[0].strip().lower()


_CACHE_LIMIT = 256


class ContentTypeDeserializer:
    """Picks a deserializer by the record's last ``content-type`` header.

    ``deserializers`` maps media types to deserializers; matching ignores case and
    parameters (``"Text/Plain; charset=utf-8"`` matches ``"text/plain"``). ``default``
    handles records without the header or with an unmapped type; without it those fail.

    >>> from kheaders import StringDeserializer
    >>> d = ContentTypeDeserializer(
    ...     {"application/json": JsonDeserializer(), "text/plain": StringDeserializer()})
    >>> d.deserialize("t", Headers([("content-type", b"application/json")]), b"[1]")
    [1]
    >>> d.deserialize("t", Headers([("content-type", b"text/plain; charset=utf-8")]), b"hi")
    'hi'

    Raises TypeError/ValueError at construction for a value without ``deserialize`` or two
    keys naming the same media type; per record, ValueError naming the topic and the content
    type when no deserializer and no default applies.
    """

    __slots__ = ("_by_raw", "_by_type", "_default", "_header")

    def __init__(
        self,
        deserializers: Mapping[str, Deserializer],
        *,
        default: Deserializer | None = None,
        header: str = CONTENT_TYPE,
    ) -> None:
        by_type: dict[str, Deserializer] = {}
        for name, deserializer in deserializers.items():
            if not callable(getattr(deserializer, "deserialize", None)):
                raise TypeError(f"deserializer for {name!r} has no deserialize() method")
            key = media_type(name)
            if not key:
                raise ValueError(f"{name!r} names no media type")
            if key in by_type:
                raise ValueError(f"{name!r} names the media type {key!r} twice")
            by_type[key] = deserializer
        if default is not None and not callable(getattr(default, "deserialize", None)):
            raise TypeError("default has no deserialize() method")
        self._by_type = by_type
        self._by_raw: dict[bytes, Deserializer] = {}
        self._default = default
        self._header = header

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> object:
        raw = headers.last_value(self._header)
        chosen = None if raw is None else self._by_raw.get(raw)
        if chosen is None:
            chosen = self._choose(topic, raw)
        return chosen.deserialize(topic, headers, data)

    def _choose(self, topic: str, raw: bytes | None) -> Deserializer:
        if raw is not None:
            found = self._by_type.get(media_type(raw))
            if found is not None:
                if len(self._by_raw) < _CACHE_LIMIT:
                    self._by_raw[raw] = found
                return found
        if self._default is not None:
            return self._default
        if raw is None:
            raise ValueError(f"topic {topic!r}: record has no {self._header!r} header")
        known = ", ".join(sorted(self._by_type)) or "none"
        shown = raw.decode("utf-8", "replace")
        raise ValueError(
            f"topic {topic!r}: no deserializer for {self._header} {shown!r} (known: {known})"
        )
