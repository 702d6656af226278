"""Binary content mode: each attribute a ``ce_`` header, the data the record's value.

``datacontenttype`` travels as the ``content-type`` header (read also from
``ce_datacontenttype``, as the JavaScript SDK writes it too); an event without data is a
record without a value (a tombstone on a compacted topic). Header keys and values are
UTF-8.
"""

from __future__ import annotations

from kheaders._errors import CloudEventError
from kheaders._model.headers import Headers
from kheaders._serde.protocols import Deserializer
from kheaders.cloudevents import _data
from kheaders.cloudevents._attributes import (
    DATACONTENTTYPE,
    MAX_NAME_LENGTH,
    MAX_VALUE_BYTES,
    REQUIRED,
    AttributeValue,
    as_text,
    check_name,
)
from kheaders.cloudevents._event import Event

PREFIX = "ce_"
CONTENT_TYPE = "content-type"


def is_ce_key(key: str) -> bool:
    """Whether header ``key`` carries an attribute (``ce_`` in any case)."""
    return len(key) > 3 and key[:3].lower() == PREFIX


def clear(headers: Headers) -> None:
    """Remove the headers binary mode writes (``ce_*`` and ``content-type``), so an event
    written over a record that already carried one leaves no duplicates."""
    for key in {k for k, _ in headers if is_ce_key(k) or k.lower() == CONTENT_TYPE}:
        headers.remove(key)


def write(event: Event, headers: Headers) -> None:
    """Add ``event``'s attributes to ``headers`` (after :func:`clear`).

    Raises CloudEventError naming an attribute whose name the spec does not allow.
    """
    for name in event.attributes:
        check_name(name, writing=True)  # all first: a refused event leaves headers alone
    clear(headers)
    for name, value in event.attributes.items():
        text = as_text(value).encode("utf-8")
        if name == DATACONTENTTYPE:
            headers.add(CONTENT_TYPE, text)
        else:
            headers.add(PREFIX + name, text)


def has_specversion(headers: Headers) -> bool:
    """Whether a ``ce_specversion`` header (any case) is present: a binary event's mark."""
    return any(len(k) == 14 and k.lower() == "ce_specversion" for k, _ in headers)


def _text(name: str, raw: bytes | None) -> str:
    if raw is None:
        raise CloudEventError(f"header for attribute {name!r} has no value", attribute=name)
    if len(raw) > MAX_VALUE_BYTES:
        raise CloudEventError(
            f"header for attribute {name!r} is {len(raw)} bytes (at most {MAX_VALUE_BYTES})",
            attribute=name,
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CloudEventError(
            f"header for attribute {name!r} is not UTF-8 (byte {exc.start})", attribute=name
        ) from exc


def attributes_of(headers: Headers) -> dict[str, AttributeValue]:
    """The attributes the ``ce_`` and ``content-type`` headers carry (not yet validated).

    What other SDKs write is read as they mean it: a null header is an attribute left out (the
    JavaScript SDK's undefined attributes, as kafkajs sends them), unless the attribute is
    required; ``ce_datacontenttype`` (the JavaScript SDK writes it beside ``content-type``) is
    ``datacontenttype`` when ``content-type`` is absent or carries the same text.

    Raises CloudEventError naming the attribute for a header given twice (``ce_id`` and
    ``CE_ID`` count as the same), ``content-type`` and ``ce_datacontenttype`` that disagree,
    an invalid name, a null required attribute, an oversized or non-UTF-8 value.
    """
    found: dict[str, AttributeValue] = {}
    content_types: dict[str, str] = {}  # datacontenttype by the header that carried it
    seen: set[str] = set()  # the headers met (as ``shown``), null ones included
    for key, raw in headers:
        if is_ce_key(key):
            name = key[3:].lower()
            if len(name) > MAX_NAME_LENGTH:
                raise CloudEventError(
                    f"header name {key[:24]!r}... is too long for an attribute",
                    attribute=name[:24],
                )
            check_name(name, writing=False)
            shown = PREFIX + name
        elif key.lower() == CONTENT_TYPE:
            name, shown = DATACONTENTTYPE, CONTENT_TYPE
        else:
            continue
        if shown in seen:
            raise CloudEventError(
                f"duplicate header {shown!r}: attribute {name!r} given more than once",
                attribute=name,
            )
        seen.add(shown)
        if raw is None:
            if name in REQUIRED:
                raise CloudEventError(
                    f"header {shown!r} for required attribute {name!r} has no value",
                    attribute=name,
                )
            continue
        if name == DATACONTENTTYPE:
            content_types[shown] = _text(name, raw)
        else:
            found[name] = _text(name, raw)
    if content_types:
        found[DATACONTENTTYPE] = _content_type(content_types)
    return found


def _content_type(given: dict[str, str]) -> str:
    """``datacontenttype`` from ``content-type`` and/or ``ce_datacontenttype``. Raises
    CloudEventError naming both headers (not their values) when they disagree."""
    values = set(given.values())
    if len(values) > 1:
        raise CloudEventError(
            f"headers {CONTENT_TYPE!r} and {PREFIX + DATACONTENTTYPE!r} disagree: each gives"
            " datacontenttype, with different values",
            attribute=DATACONTENTTYPE,
        )
    return values.pop()


def read(topic: str, headers: Headers, value: bytes | None, data: Deserializer | None) -> Event:
    """The event a binary-mode record carries; a null or empty value means no data.

    Raises CloudEventError as :func:`attributes_of` and Event do, and for data that does
    not decode as its ``datacontenttype`` says.
    """
    attributes = attributes_of(headers)
    event = Event(attributes)  # validated before the data is looked at
    if not value:
        return event
    content_type = attributes.get(DATACONTENTTYPE)
    decoded = _data.decode(
        topic, headers, value, content_type if isinstance(content_type, str) else None, data
    )
    return event.with_data(decoded)
