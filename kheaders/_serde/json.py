"""JSON serde and the deserializer that dispatches on a record's ``content-type`` header.

The serializer's output is defined as the standard library's ``json`` encoder's (compact
separators, ``ensure_ascii=False``, UTF-8). When orjson is installed (the ``json`` extra) it
encodes first, and its bytes are used only where they are the standard library's: orjson
writes a float below 1e-4 in magnitude without the exponent form ``repr`` uses (``0.00001``
for ``1e-05``, ``1.5e-7`` for ``1.5e-07``) and NaN/infinity as ``null`` (JSON has neither),
so output holding ``null``, ``0.0000`` or a digit followed by ``e-`` is encoded again by the
standard library, as is every value orjson refuses (integers beyond 64 bits, keys that are
not strings, subclasses of built-in types, dataclasses, dates, nesting deeper than 254,
lone surrogates). The same bytes either way, proved in tests/serde/test_json_fast.py.
"""

from __future__ import annotations

import enum
import json
import re
import uuid
from collections.abc import Callable, Mapping
from types import ModuleType

from kheaders._errors import DecodeError
from kheaders._model.headers import Headers
from kheaders._serde.builtin import CONTENT_TYPE
from kheaders._serde.protected import explained
from kheaders._serde.protocols import Deserializer


def _load_orjson() -> ModuleType | None:
    try:
        import orjson
    except ImportError:
        return None
    return orjson


_orjson = _load_orjson()
"""orjson when installed, else ``None`` (tests set it to ``None`` to force the fallback)."""

_EXPONENT = re.compile(rb"[0-9]e-")


def _default(value: object) -> object:
    """What both encoders do beyond JSON's types: a UUID as its text, an enum member's value.

    orjson encodes both natively (it has no option to refuse them), so the standard
    library path does the same; anything else raises TypeError as ``json`` does.
    """
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_Dumps = Callable[[object, None, int], bytes]


def _fast_dumps(sort_keys: bool) -> tuple[_Dumps, int] | None:
    """orjson's ``dumps`` and the options under which it agrees with ``json``, or ``None``."""
    lib = _orjson
    if lib is None:
        return None
    option: int = (
        lib.OPT_PASSTHROUGH_DATACLASS | lib.OPT_PASSTHROUGH_DATETIME | lib.OPT_PASSTHROUGH_SUBCLASS
    )
    if sort_keys:
        option |= lib.OPT_SORT_KEYS
    return lib.dumps, option


def _fast_encoder(sort_keys: bool) -> Callable[[object], bytes] | None:
    """orjson's ``dumps`` with the options under which it agrees with ``json``, or ``None``."""
    found = _fast_dumps(sort_keys)
    if found is None:
        return None
    dumps, option = found

    def encode(value: object) -> bytes:
        return dumps(value, None, option)

    return encode


def _same_as_json(out: bytes) -> bool:
    """Whether orjson's ``out`` is what the standard library writes (see the module doc)."""
    if out.find(b"null") >= 0 or out.find(b"0.0000") >= 0:
        return False
    return out.find(b"e-") < 0 or _EXPONENT.search(out) is None


def _fast_bytes(fast: Callable[[object], bytes], data: object) -> bytes | None:
    """orjson's bytes for ``data`` when they are the standard library's, else ``None``."""
    try:
        out = fast(data)
    except TypeError:  # orjson.JSONEncodeError: json decides (encodes, or raises its error)
        return None
    return out if _same_as_json(out) else None


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

    Beyond JSON's types, a ``uuid.UUID`` is written as its text and an ``enum.Enum`` member
    as its value. With the ``json`` extra (orjson) the bytes are the same, only faster (see
    the module's docstring).

    Raises TypeError (naming the topic) for a value JSON cannot represent, ValueError for
    NaN or infinity (not JSON), for circular references and for lone surrogates.
    """

    __slots__ = ("_content_type", "_dumps", "_encode", "_fast", "_header", "_option")

    def __init__(
        self,
        content_type: bool | str = True,
        *,
        sort_keys: bool = False,
        header: str = CONTENT_TYPE,
    ) -> None:
        self._encode = json.JSONEncoder(
            ensure_ascii=False,
            allow_nan=False,
            separators=(",", ":"),
            sort_keys=sort_keys,
            default=_default,
        ).encode
        self._fast = _fast_encoder(sort_keys)
        found = _fast_dumps(sort_keys)
        self._dumps: _Dumps | None = None if found is None else found[0]
        self._option = 0 if found is None else found[1]
        if content_type is True:
            content_type = "application/json"
        self._content_type = content_type.encode("utf-8") if content_type else None
        self._header = header

    def serialize(self, topic: str, headers: Headers, data: object) -> bytes | None:
        if data is None:
            return None
        out = None
        dumps = self._dumps
        if dumps is not None:  # orjson: _fast_bytes without its frame (once per record)
            try:
                out = dumps(data, None, self._option)
            except TypeError:  # orjson.JSONEncodeError: json decides (encodes, or raises)
                out = None
            else:
                if not _same_as_json(out):
                    out = None
        if out is None:
            try:
                out = self._encode(data).encode("utf-8")
            except TypeError as exc:
                raise TypeError(f"topic {topic!r}: cannot encode as JSON: {exc}") from exc
            except ValueError as exc:  # NaN, a circular reference, a lone surrogate
                raise ValueError(f"topic {topic!r}: cannot encode as JSON: {exc}") from exc
        if self._content_type is not None:
            headers.set(self._header, self._content_type)
        return out


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
                explained(topic, f"JSON is not UTF-8: {exc.reason}", headers), exc.start
            ) from exc
        try:
            return self._decode(text)
        except json.JSONDecodeError as exc:
            offset = len(text[: exc.pos].encode("utf-8"))
            failure = f"invalid JSON: {exc.msg}"
            raise DecodeError(explained(topic, failure, headers), offset) from exc
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
