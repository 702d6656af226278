"""An event's data to bytes and back, by its ``datacontenttype``.

Without a data (de)serializer: ``bytes`` go as they are, ``str`` as UTF-8 (binary mode's
``datacontenttype`` defaulting to ``text/plain; charset=utf-8``), anything else as compact
JSON (defaulting to ``application/json``). Reading gives JSON
media types (``application/json``, ``text/json``, ``*/*+json``) as the decoded value,
``text/*`` as ``str`` and every other type (or none) as ``bytes``.
"""

from __future__ import annotations

from kheaders._errors import CloudEventError, DecodeError
from kheaders._model.headers import Headers
from kheaders._serde.json import JsonDeserializer, JsonSerializer, media_type
from kheaders._serde.protocols import Deserializer, Serializer

JSON_TYPE = "application/json"
_json_out = JsonSerializer(content_type=False)
_json_in = JsonDeserializer()


def is_json(content_type: str | None) -> bool:
    """Whether ``content_type`` names JSON (``application/json``, ``text/json``, ``+json``)."""
    if content_type is None:
        return False
    media = media_type(content_type)
    return media in ("application/json", "text/json") or media.endswith("+json")


def is_text(content_type: str | None) -> bool:
    """Whether ``content_type`` is a ``text/*`` type that is not JSON."""
    return content_type is not None and media_type(content_type).startswith("text/")


TEXT_TYPE = "text/plain; charset=utf-8"


def default_content_type(data: object) -> str | None:
    """The ``datacontenttype`` binary mode implies for ``data`` when the event has none and
    the default encoding writes it: UTF-8 text for ``str``, JSON for anything but bytes."""
    if data is None or isinstance(data, bytes | bytearray | memoryview):
        return None
    return TEXT_TYPE if isinstance(data, str) else JSON_TYPE


def encode(topic: str, data: object, serializer: Serializer | None) -> bytes:
    """``data`` as bytes (see the module doc); ``serializer`` decides when given.

    ``serializer`` sees a scratch Headers: it may not change the record's headers (binary
    mode's ``content-type`` is the event's ``datacontenttype``).
    Raises CloudEventError naming ``data`` when it cannot be encoded (chained).
    """
    try:
        out = (
            serializer.serialize(topic, Headers(), data)
            if serializer is not None
            else _default_encode(topic, data)
        )
    except CloudEventError:
        raise
    except (TypeError, ValueError) as exc:
        raise CloudEventError(
            f"the event's data cannot be encoded: {exc}", attribute="data"
        ) from exc
    if out is None:
        raise CloudEventError("the data serializer gave None for data", attribute="data")
    return out


def _default_encode(topic: str, data: object) -> bytes | None:
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    if isinstance(data, str):
        try:
            return data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError("text data holds a lone surrogate") from exc
    return _json_out.serialize(topic, Headers(), data)


def decode(
    topic: str,
    headers: Headers,
    value: bytes,
    content_type: str | None,
    deserializer: Deserializer | None,
) -> object:
    """The event's data from ``value`` (see the module doc); ``deserializer`` decides when
    given (it sees the record's headers).

    Raises CloudEventError naming ``data`` for bytes that do not decode as their type says
    (chained to the DecodeError, which has the byte offset).
    """
    if deserializer is not None:
        return deserializer.deserialize(topic, headers, value)
    try:
        if is_json(content_type):
            return _json_in.deserialize(topic, headers, value)
        if is_text(content_type):
            return value.decode("utf-8")
    except (DecodeError, UnicodeDecodeError) as exc:
        raise CloudEventError(
            f"the event's data does not decode as its datacontenttype says: {exc}",
            attribute="data",
        ) from exc
    return value
