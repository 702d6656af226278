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

from collections.abc import Sequence
from dataclasses import dataclass

from kheaders._model.redact import REDACTED, Redactor, printable
from kheaders.deadletter import _own
from kheaders.deadletter import spring as sh

Pairs = Sequence[tuple[str, bytes | None]]

DEAD_LETTER_SUFFIXES = ("-dlt", ".dlt", "_dlt", "-dlq", ".dlq", "_dlq")
"""Endings (case-insensitive) of the topic names read as dead-letter topics (``.dlt``: the
default of kheaders before it took Spring's ``-dlt``)."""

_PLAIN_SPRING = (sh.DLT_ORIGINAL_TOPIC, sh.DLT_ORIGINAL_PARTITION, sh.DLT_ORIGINAL_OFFSET)

MESSAGE_LIMIT = 200
"""Characters of an exception message in a one-line summary (the header holds it all)."""


@dataclass(frozen=True)
class Failure:
    """What a record's failure headers say, as text for a terminal (already escaped)."""

    original: str | None
    """``topic[partition]@offset`` the record was first read at (``?`` for a malformed part):
    Spring's ``kafka_original-*`` when present (kept from the first failure on), else
    ``kheaders.dlt.original.*``."""
    error: str | None
    """``module.Type: message`` (the message cut to :data:`MESSAGE_LIMIT`, or redacted): the
    ``kheaders.dlt.error.*`` when present (the failure that dead-lettered it), else Spring's."""
    failed_attempt: int | None
    """The attempt that failed last (Spring's ``retry_topic-attempts`` minus one), if said."""


def text(value: bytes | None) -> str:
    """A header value as escaped text (invalid UTF-8 replaced)."""
    return printable((value or b"").decode("utf-8", "replace"))


def _number(value: bytes | None) -> str:
    shown = (value or b"").decode("ascii", "replace")
    return shown if shown.lstrip("-").isdigit() else "?"


def _fixed(value: bytes | None, size: int) -> str:
    number = sh.decode_fixed(value, size)
    return "?" if number is None else str(number)


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
    original = kind = message = None
    message_key = ""
    for topic_key, partition_key, offset_key in (  # the first read: kept across every hop
        (sh.ORIGINAL_TOPIC, sh.ORIGINAL_PARTITION, sh.ORIGINAL_OFFSET),
        _PLAIN_SPRING,
    ):
        if topic_key in last:
            original = f"{text(last[topic_key])}[{_fixed(last.get(partition_key), 4)}]"
            original += f"@{_fixed(last.get(offset_key), 8)}"
            break
    if original is None and _own.ORIGINAL_TOPIC in last:
        original = (
            f"{text(last[_own.ORIGINAL_TOPIC])}[{_number(last.get(_own.ORIGINAL_PARTITION))}]"
        )
        original += f"@{_number(last.get(_own.ORIGINAL_OFFSET))}"
    if _own.ERROR_TYPE in last:  # written when dead-lettered: the last failure
        kind, message_key = last[_own.ERROR_TYPE], _own.ERROR_MESSAGE
        if last.get(_own.ERROR_FIELD):
            kind = (kind or b"?") + b" (" + (last[_own.ERROR_FIELD] or b"") + b")"
    else:
        for type_key, msg_key in (
            (sh.EXCEPTION_FQCN, sh.EXCEPTION_MESSAGE),
            (sh.KEY_EXCEPTION_FQCN, sh.KEY_EXCEPTION_MESSAGE),
            (sh.DLT_EXCEPTION_FQCN, sh.DLT_EXCEPTION_MESSAGE),
        ):
            if type_key in last:
                kind, message_key = last[type_key], msg_key
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
    attempt = None
    if sh.ATTEMPTS in last:
        attempt = sh.decode_attempts(last[sh.ATTEMPTS]) - 1
    return Failure(original, error, attempt if attempt and attempt > 0 else None)
