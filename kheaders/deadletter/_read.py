"""What a record's retry and failure headers say, as text for people (``kheaders tail``,
``dlt replay``): where it came from, why it failed, whether it is a dead letter. Every reader
takes the last value of a repeated header (Spring appends a ``retry_topic-*`` set per hop).

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

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
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


def _iso(ms: int) -> str:
    try:
        stamp = dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return stamp.replace("+00:00", "Z")


def describe(headers: Iterable[tuple[str, bytes | None]]) -> list[str]:
    """Lines decoding a record's Spring retry / dead-letter headers (none without them).

    Never raises for malformed values: they are shown as such.

    >>> describe([("retry_topic-attempts", b"\\x00\\x00\\x00\\x02"),
    ...           ("kafka_original-topic", b"orders"),
    ...           ("kafka_original-partition", b"\\x00\\x00\\x00\\x01"),
    ...           ("kafka_original-offset", b"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x2a")])
    ['retry: next attempt 2', 'original: orders[1]@42']
    """
    last = dict(headers)  # the last value of each: Spring appends a retry set per hop
    lines: list[str] = []
    retry: list[str] = []
    if sh.ATTEMPTS in last:
        retry.append(f"next attempt {sh.decode_attempts(last[sh.ATTEMPTS])}")
    for name, label in ((sh.BACKOFF_TIMESTAMP, "due"), (sh.ORIGINAL_TIMESTAMP_RETRY, "first")):
        if name in last:
            ms = sh.decode_timestamp(last[name])
            retry.append(f"{label} {_iso(ms) if ms is not None else '<malformed>'}")
    if retry:
        lines.append("retry: " + ", ".join(retry))
    original = where(last, (SPRING_ORIGIN,))
    if original is not None:
        ts = sh.decode_fixed(last.get(sh.ORIGINAL_TIMESTAMP), 8)
        if ts is not None and ts >= 0:
            original += f" at {_iso(ts)}"
        if last.get(sh.ORIGINAL_CONSUMER_GROUP):
            original += f" (group {text(last[sh.ORIGINAL_CONSUMER_GROUP])})"
        lines.append("original: " + original)
    for name in (sh.EXCEPTION_FQCN, sh.KEY_EXCEPTION_FQCN):
        if name in last:
            lines.append(f"failed: {text(last[name])}")
    return lines


def state_lines(topic: str, headers: Pairs, redactor: Redactor | None = None) -> list[str]:
    """``kheaders tail``'s lines on a record's retry or dead-letter state (none without it).

    A retry record shows its next attempt and when it is due; a dead letter shows that there
    is none; both show where the record came from and the exception with its message.
    """
    found = failure(headers, redactor)
    if found is None:
        return describe(headers)  # retry state without a failure, if any
    dead = is_dead_letter(topic, headers)
    hidden = set(sh.EXCEPTION_HEADERS)
    if dead:
        hidden.update(sh.RETRY_HEADERS)
    lines = describe([(k, v) for k, v in headers if k not in hidden])
    if not any(line.startswith("original: ") for line in lines) and found.original:
        lines.append(f"original: {found.original}")
    if dead:
        after = f" after attempt {found.failed_attempt}" if found.failed_attempt else ""
        lines.insert(0, f"dead letter: failed{after}; no further attempt")
    if found.error:
        lines.append(f"failed: {found.error}")
    return lines


def summary(headers: Iterable[tuple[str, bytes | None]], redactor: Redactor | None = None) -> str:
    """``original=topic[p]@o  failed=Type: message`` for one replayed record ('' for none)."""
    found = failure(list(headers), redactor)
    if found is None:
        return ""
    parts = (("original", found.original), ("failed", found.error))
    return "  ".join(f"{name}={value}" for name, value in parts if value)
