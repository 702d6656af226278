"""Structured content mode: the whole event as one JSON document, the record's value.

The record's ``content-type`` is ``application/cloudevents+json``. Data whose
``datacontenttype`` is JSON (or absent, for data that is not bytes) is embedded as JSON;
``bytes`` go as ``data_base64``; text as a JSON string.
"""

from __future__ import annotations

import base64
import binascii
import json

from kheaders._errors import CloudEventError, DecodeError
from kheaders._model.headers import Headers
from kheaders._serde.json import JsonDeserializer, JsonSerializer, media_type
from kheaders._serde.protocols import Deserializer, Serializer
from kheaders.cloudevents import _data
from kheaders.cloudevents._attributes import DATACONTENTTYPE, as_text, check_name
from kheaders.cloudevents._event import Event

MEDIA_TYPE = "application/cloudevents+json"
CLOUDEVENTS_PREFIX = "application/cloudevents"
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
"""The largest structured event read (beyond it, hostile input)."""
_json_out = JsonSerializer(content_type=False)
_json_in = JsonDeserializer()


def is_structured(content_type: bytes | None) -> bool:
    """Whether a record's ``content-type`` says structured mode (the spec: prefixed with
    ``application/cloudevents``, any case)."""
    return content_type is not None and media_type(content_type).startswith(CLOUDEVENTS_PREFIX)


def write(topic: str, event: Event, data: Serializer | None) -> bytes:
    """``event`` as its JSON document.

    Raises CloudEventError naming an attribute the spec does not allow, or ``data`` when
    the data cannot be written.
    """
    document: dict[str, object] = {}
    for name, value in event.attributes.items():
        check_name(name, writing=True)
        document[name] = as_text(value) if name == "time" else value
    payload = event.data
    if payload is not None:
        content_type = event.get(DATACONTENTTYPE)
        ctype = content_type if isinstance(content_type, str) else None
        if data is not None:
            payload = _data.encode(topic, payload, data)
        if isinstance(payload, bytes | bytearray | memoryview):
            if data is not None and _data.is_json(ctype):
                payload = _parsed(topic, bytes(payload))
                document["data"] = payload
            else:
                document["data_base64"] = base64.b64encode(bytes(payload)).decode("ascii")
        else:
            document["data"] = payload
    try:
        out = _json_out.serialize(topic, Headers(), document)
    except (TypeError, ValueError) as exc:
        raise CloudEventError(
            f"the event cannot be written as JSON: {exc}", attribute="data"
        ) from exc
    assert out is not None  # a dict is never None
    return out


def _parsed(topic: str, raw: bytes) -> object:
    try:
        return _json_in.deserialize(topic, Headers(), raw)
    except DecodeError as exc:
        raise CloudEventError(
            f"the data serializer's output is not the JSON its datacontenttype says: {exc}",
            attribute="data",
        ) from exc


def read(
    topic: str,
    headers: Headers,
    value: bytes | None,
    content_type: bytes,
    data: Deserializer | None,
) -> Event:
    """The event a structured-mode record carries.

    Raises CloudEventError for an event format other than JSON, a null value, bytes that
    are not a JSON object, an attribute of the wrong JSON type, both ``data`` and
    ``data_base64``, and base64 that does not decode.
    """
    media = media_type(content_type)
    if media != MEDIA_TYPE:
        raise CloudEventError(
            f"event format {media!r} is not supported (only {MEDIA_TYPE})",
            attribute="content-type",
        )
    if value is None:
        raise CloudEventError("a structured-mode record has no value", attribute="data")
    return _event_of(topic, headers, _document(topic, headers, value), data)


def _document(topic: str, headers: Headers, value: bytes) -> dict[str, object]:
    """The JSON object a structured value holds. Raises CloudEventError for one too large,
    not JSON, or not an object."""
    if len(value) > MAX_DOCUMENT_BYTES:
        raise CloudEventError(
            f"structured event is {len(value)} bytes (at most {MAX_DOCUMENT_BYTES})"
        )
    try:
        document = _json_in.deserialize(topic, headers, value)
    except DecodeError as exc:
        raise CloudEventError(f"structured event is not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise CloudEventError(
            f"structured event must be a JSON object, got {type(document).__name__}"
        )
    return document


def looks_structured(value: bytes | None) -> bool:
    """Whether ``value`` could be a structured event mislabelled (a JSON object naming
    ``specversion``): a cheap look before any parsing."""
    if not value or len(value) > MAX_DOCUMENT_BYTES:
        return False
    start = value.lstrip()[:1]
    return start == b"{" and b'"specversion"' in value


def read_mislabelled(
    topic: str,
    headers: Headers,
    value: bytes,
    content_type: bytes | None,
    data: Deserializer | None,
) -> Event:
    """A structured event whose record has no ``application/cloudevents`` content type, as
    the CloudEvents Python SDK 1.x writes it (``cloudevents.v1.kafka.to_structured``): the
    ``content-type`` header then carries the event's ``datacontenttype`` (taken out of the
    document), or is absent. Raises CloudEventError as :func:`read` does, and when the
    header and the document give different ``datacontenttype`` values.
    """
    document = _document(topic, headers, value)
    if content_type is not None:
        given = content_type.decode("utf-8", "replace")
        inside = document.setdefault(DATACONTENTTYPE, given)
        if inside != given:
            raise CloudEventError(
                "the 'content-type' header and the structured event's 'datacontenttype' disagree",
                attribute=DATACONTENTTYPE,
            )
    return _event_of(topic, headers, document, data)


def _event_of(
    topic: str, headers: Headers, document: dict[str, object], data: Deserializer | None
) -> Event:
    payload = document.pop("data", None)
    encoded = document.pop("data_base64", None)
    for name, value in document.items():
        if isinstance(value, float | list | dict):
            raise CloudEventError(
                f"attribute {name!r} must be a JSON string, boolean or integer,"
                f" got {type(value).__name__}",
                attribute=name,
            )
    event = Event(document)  # validated before the data is looked at
    if encoded is not None:
        if payload is not None:
            raise CloudEventError(
                "structured event has both 'data' and 'data_base64'", attribute="data_base64"
            )
        if not isinstance(encoded, str):
            raise CloudEventError("'data_base64' must be a JSON string", attribute="data_base64")
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise CloudEventError(
                "'data_base64' is not valid base64", attribute="data_base64"
            ) from exc
        payload = raw if data is None else data.deserialize(topic, headers, raw)
    elif payload is not None and data is not None:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        payload = data.deserialize(topic, headers, text.encode("utf-8"))
    return event if payload is None else event.with_data(payload)
