"""What a record's failure headers say: where it came from, why it failed, whether it is a
dead letter. Every reader takes the last value of a repeated header (Spring appends a
``retry_topic-*`` set per hop).

Two header contracts carry a failure: Spring Kafka's (``kafka_original-*``,
``kafka_exception-*``, ``retry_topic-*``, also written by kheaders' processor) and kheaders'
own (``kheaders.dlt.*``, :class:`kheaders.DeadLetterPublisher` and the mirror).

Telling a dead letter from a retry record: a ``kheaders.dlt.*`` record, and one carrying
Spring's plain ``DeadLetterPublishingRecoverer`` headers (``kafka_dlt-exception-*``), is
one. Spring's retry-topic contract writes the same headers on a retry hop and on the last
(dead-letter) hop, ``retry_topic-attempts`` included, so there only the topic tells them
apart: a record on a topic named like a dead-letter topic (``-dlt``, ``.dlt``, ``_dlt``, the
same with ``dlq``: Spring's and kheaders' defaults among them) has no next attempt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kheaders._model.redact import REDACTED, Redactor, printable
from kheaders.deadletter import _own
from kheaders.deadletter import spring as sh

Pairs = Sequence[tuple[str, bytes | None]]

DEAD_LETTER_SUFFIXES = ("-dlt", ".dlt", "_dlt", "-dlq", ".dlq", "_dlq")
"""Endings (case-insensitive) of the topic names read as dead-letter topics (``.dlt``: the
default of kheaders before it took Spring's ``-dlt``)."""

Origins = Sequence[tuple[str, str, str]]
SPRING_ORIGIN = (sh.ORIGINAL_TOPIC, sh.ORIGINAL_PARTITION, sh.ORIGINAL_OFFSET)
OWN_ORIGIN = (_own.ORIGINAL_TOPIC, _own.ORIGINAL_PARTITION, _own.ORIGINAL_OFFSET)
ORIGINS = (
    SPRING_ORIGIN,
    (sh.DLT_ORIGINAL_TOPIC, sh.DLT_ORIGINAL_PARTITION, sh.DLT_ORIGINAL_OFFSET),
    OWN_ORIGIN,
)
"""The topic, partition and offset headers of each contract, Spring's first (written at the
first failure and kept across every hop), then the plain ``DeadLetterPublishingRecoverer``'s,
then kheaders'."""
_ERRORS = (
    (_own.ERROR_TYPE, _own.ERROR_MESSAGE),  # written when dead-lettered: the last failure
    (sh.EXCEPTION_FQCN, sh.EXCEPTION_MESSAGE),
    (sh.KEY_EXCEPTION_FQCN, sh.KEY_EXCEPTION_MESSAGE),
    (sh.DLT_EXCEPTION_FQCN, sh.DLT_EXCEPTION_MESSAGE),
)

MESSAGE_LIMIT = 200
"""Characters of an exception message in a one-line summary (the header holds it all)."""


@dataclass(frozen=True)
class Failure:
    """What a record's failure headers say, as text for a terminal (already escaped)."""

    original: str | None
    """``topic[partition]@offset`` the record was first read at (``?`` for a malformed part),
    from the first contract of :data:`ORIGINS` present."""
    error: str | None
    """``module.Type: message`` (the message cut to :data:`MESSAGE_LIMIT`, or redacted): the
    ``kheaders.dlt.error.*`` when present (the failure that dead-lettered it), else Spring's."""
    failed_attempt: int | None
    """The attempt that failed last (Spring's ``retry_topic-attempts`` minus one), if said."""


def text(value: bytes | None) -> str:
    """A header value as escaped text (invalid UTF-8 replaced)."""
    return printable((value or b"").decode("utf-8", "replace"))


def number(key: str, value: bytes | None, size: int) -> int | None:
    """An original partition (``size`` 4), offset or timestamp (8) header's value: Spring's
    a big-endian int of ``size`` bytes, kheaders' decimal text in that range; else None."""
    if not key.startswith(_own.PREFIX):
        return sh.decode_fixed(value, size)
    if value is None or not value.removeprefix(b"-").isdigit() or len(value) > 20:
        return None
    found, bound = int(value), 1 << (8 * size - 1)
    return found if -bound <= found < bound else None


def origin(
    last: Mapping[str, bytes | None], origins: Origins = ORIGINS
) -> tuple[bytes, int | None, int | None] | None:
    """The topic, partition and offset (None: malformed) a record was first read at, from
    the first of ``origins`` whose topic header ``last`` (each header's last value) holds."""
    for topic, partition, offset in origins:
        if topic in last:
            found = number(partition, last.get(partition), 4)
            return last[topic] or b"", found, number(offset, last.get(offset), 8)
    return None


def where(last: Mapping[str, bytes | None], origins: Origins = ORIGINS) -> str | None:
    """:func:`origin` as ``topic[partition]@offset`` for a terminal (``?``: malformed)."""
    found = origin(last, origins)
    if found is None:
        return None
    topic, partition, offset = found
    p, o = ("?" if n is None else n for n in (partition, offset))
    return f"{text(topic)}[{p}]@{o}"


def is_dead_letter(topic: str, headers: Pairs) -> bool:
    """Whether a record read from ``topic`` is a dead letter (see the module's docstring)."""
    keys = {key for key, _ in headers}
    if any(key.startswith(_own.PREFIX) for key in keys) or sh.DLT_EXCEPTION_FQCN in keys:
        return True
    failed = sh.EXCEPTION_FQCN in keys or sh.KEY_EXCEPTION_FQCN in keys
    return failed and topic.lower().endswith(DEAD_LETTER_SUFFIXES)


def failure(headers: Pairs, redactor: Redactor | None = None) -> Failure | None:
    """The failure ``headers`` describe, or None when they carry none.

    The exception message is shown as ``<redacted>`` where ``redactor`` hides its header.
    """
    last = dict(headers)  # each header's last value
    original = where(last)
    kind, message_key = None, ""
    for type_key, key in _ERRORS:  # the first present
        if type_key in last:
            kind, message_key = last[type_key], key
            if type_key == _own.ERROR_TYPE and last.get(_own.ERROR_FIELD):
                kind = (kind or b"?") + b" (" + (last[_own.ERROR_FIELD] or b"") + b")"
            break
    if original is None and kind is None:
        return None
    error = None
    if kind is not None:
        error = text(kind)
        message = last.get(message_key)
        if message:
            hidden = redactor is not None and redactor.hides(message_key, message)
            shown = REDACTED if hidden else text(message)
            if len(shown) > MESSAGE_LIMIT:
                shown = shown[:MESSAGE_LIMIT] + "…"
            error += f": {shown}"
    attempt = sh.decode_attempts(last.get(sh.ATTEMPTS)) - 1  # 0 without the header
    return Failure(original, error, attempt or None)
