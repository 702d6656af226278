"""The CloudEvents 1.0 attribute rules: names, required attributes, and each type's form.

Attribute values are held as ``str``, ``bool``, ``int`` (the spec's Integer: 32-bit signed)
or, for ``time``, a timezone-aware :class:`~datetime.datetime`. Binary content mode carries
every value as text; :func:`as_text` gives the spec's canonical string form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime

from kheaders._errors import CloudEventError

SPECVERSION = "1.0"
"""The only CloudEvents version kheaders reads and writes."""
REQUIRED = ("id", "source", "specversion", "type")
"""The attributes every event has (the spec's REQUIRED context attributes)."""
TIME = "time"
DATACONTENTTYPE = "datacontenttype"
NAME_LENGTH = 20
"""The spec's limit on an attribute name's length (a SHOULD: refused on write only)."""
MAX_NAME_LENGTH = 256
"""The longest attribute name read from the wire (beyond it, hostile input)."""
MAX_VALUE_BYTES = 64 * 1024
"""The largest attribute value (UTF-8 bytes) read or written."""

AttributeValue = str | bool | int | datetime
"""What an attribute value may be (``time`` is a datetime once validated)."""

_NAME = re.compile(r"[a-z0-9]+")
_INT32 = (-(2**31), 2**31 - 1)
# RFC 3339 section 5.6 date-time (the "T" and "Z" may be lower case, as it allows).
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)
# RFC 3986 URI-reference: only its characters, with well-formed percent-escapes.
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*", re.ASCII)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:", re.ASCII)
_URI_REFERENCES = ("source",)
_URIS = ("dataschema",)
_STRINGS = ("id", "type", "subject", DATACONTENTTYPE, "specversion")


def check_name(name: str, *, writing: bool) -> None:
    """Refuse an attribute name that is not lower-case ASCII letters and digits.

    Writing also holds it to the spec's 20 characters; reading accepts up to 256 (the
    spec's length is a SHOULD, and senders exist that pass it). ``data`` is the event's
    data, never an attribute.
    Raises CloudEventError naming the attribute (by ``repr``, shortened).
    """
    if name in _GOOD_NAMES:
        return
    limit = NAME_LENGTH if writing else MAX_NAME_LENGTH
    if len(name) > limit:
        raise CloudEventError(
            f"attribute name {name[:24]!r}... is {len(name)} characters (at most {limit})",
            attribute=name[:24],
        )
    if _NAME.fullmatch(name) is None:
        raise CloudEventError(
            f"attribute name {name!r} must be lower-case letters a-z and digits 0-9 only",
            attribute=name,
        )
    if name == "data":
        raise CloudEventError("'data' is the event's data, not an attribute", attribute=name)
    if len(name) <= NAME_LENGTH and len(_GOOD_NAMES) < _NAME_CACHE:
        _GOOD_NAMES.add(name)


_NAME_CACHE = 1024
_GOOD_NAMES: set[str] = set()
"""Names already found valid both ways (at most ``_NAME_CACHE``: names come from the wire)."""


def parse_time(text: str) -> datetime:
    """An RFC 3339 timestamp as an aware datetime (fractions beyond microseconds dropped).

    Raises CloudEventError naming ``time`` when the text is not RFC 3339.
    """
    if _RFC3339.fullmatch(text) is None:
        raise CloudEventError("attribute 'time' is not an RFC 3339 timestamp", attribute=TIME)
    fraction = re.search(r"\.(\d+)", text)
    if fraction is not None and len(fraction.group(1)) > 6:  # datetime keeps microseconds
        text = text[: fraction.start(1) + 6] + text[fraction.end(1) :]
    try:
        return datetime.fromisoformat(text.upper())
    except ValueError as exc:  # e.g. month 13, hour 25
        raise CloudEventError(
            "attribute 'time' is not a valid RFC 3339 timestamp", attribute=TIME
        ) from exc


def format_time(value: datetime) -> str:
    """``value`` as RFC 3339 text, UTC written as ``Z``."""
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def as_text(value: AttributeValue) -> str:
    """The canonical string form of an attribute value (binary content mode's header)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return format_time(value)
    return str(value)


def _check_text(name: str, value: str) -> None:
    if not value:
        raise CloudEventError(f"attribute {name!r} must not be empty", attribute=name)
    if value.isascii():
        size = len(value)
    else:
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise CloudEventError(
                f"attribute {name!r} holds a lone surrogate", attribute=name
            ) from exc
    if size > MAX_VALUE_BYTES:
        raise CloudEventError(
            f"attribute {name!r} is longer than {MAX_VALUE_BYTES} bytes", attribute=name
        )
    if "\x00" in value:
        raise CloudEventError(f"attribute {name!r} holds a NUL", attribute=name)


def checked_value(name: str, value: object) -> AttributeValue:
    """``value`` as the attribute ``name`` may hold it (``time`` text becomes a datetime).

    Raises CloudEventError naming the attribute for a wrong type or form: the required
    and string attributes must be non-empty text, ``source`` a URI-reference, ``dataschema``
    an absolute URI, ``time`` RFC 3339 (text, or an aware datetime), ``specversion`` 1.0;
    extension values must be text, a bool or a 32-bit integer.
    """
    if name == TIME:
        if isinstance(value, datetime):
            if value.tzinfo is None:
                raise CloudEventError("attribute 'time' must be timezone-aware", attribute=TIME)
            return value
        if not isinstance(value, str):
            raise CloudEventError(
                f"attribute 'time' must be text or a datetime, got {type(value).__name__}",
                attribute=TIME,
            )
        return parse_time(value)
    if name in _STRINGS or name in _URI_REFERENCES or name in _URIS:
        if not isinstance(value, str):
            raise CloudEventError(
                f"attribute {name!r} must be text, got {type(value).__name__}", attribute=name
            )
        _check_text(name, value)
        if name == "specversion" and value != SPECVERSION:
            raise CloudEventError(
                f"unknown specversion: only {SPECVERSION!r} is supported", attribute=name
            )
        if (name in _URI_REFERENCES or name in _URIS) and _URI_CHARS.fullmatch(value) is None:
            raise CloudEventError(
                f"attribute {name!r} is not a URI-reference (RFC 3986)", attribute=name
            )
        if name in _URIS and _SCHEME.match(value) is None:
            raise CloudEventError(
                f"attribute {name!r} must be an absolute URI (with a scheme)", attribute=name
            )
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not _INT32[0] <= value <= _INT32[1]:
            raise CloudEventError(
                f"attribute {name!r} is an integer outside the 32-bit range", attribute=name
            )
        return value
    if isinstance(value, str):
        _check_text(name, value)
        return value
    raise CloudEventError(
        f"attribute {name!r} must be text, a bool or an integer, got {type(value).__name__}",
        attribute=name,
    )


def checked_attributes(
    attributes: Mapping[str, object], *, writing: bool
) -> dict[str, AttributeValue]:
    """Every attribute checked (names and values), the required ones present.

    ``None`` values are dropped (the SDK's way of saying absent).
    Raises CloudEventError naming the first attribute at fault.
    """
    out: dict[str, AttributeValue] = {}
    for name, value in attributes.items():
        if not isinstance(name, str):
            raise CloudEventError(f"attribute names must be text, got {type(name).__name__}")
        if value is None:
            continue
        check_name(name, writing=writing)
        out[name] = checked_value(name, value)
    for name in REQUIRED:
        if name not in out:
            raise CloudEventError(f"required attribute {name!r} is missing", attribute=name)
    return out


def now() -> datetime:
    """The current time, UTC (for events the application gave no ``time``)."""
    return datetime.now(UTC)
