"""Dead letters read by people: where a record came from and why it failed, in one line each.

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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kheaders._model.redact import REDACTED, Redactor, printable

Pairs = Sequence[tuple[str, bytes | None]]

DEAD_LETTER_SUFFIXES = ("-dlt", ".dlt", "_dlt", "-dlq", ".dlq", "_dlq")
"""Endings (case-insensitive) of the topic names read as dead-letter topics."""

KHEADERS_PREFIX = "kheaders.dlt."
_K_TOPIC = "kheaders.dlt.original.topic"
_K_PARTITION = "kheaders.dlt.original.partition"
_K_OFFSET = "kheaders.dlt.original.offset"
_K_FIELD = "kheaders.dlt.error.field"
_K_TYPE = "kheaders.dlt.error.type"
_K_MESSAGE = "kheaders.dlt.error.message"
_PLAIN_SPRING_FQCN = "kafka_dlt-exception-fqcn"
_PLAIN_SPRING_MESSAGE = "kafka_dlt-exception-message"
_PLAIN_SPRING = (
    "kafka_dlt-original-topic",
    "kafka_dlt-original-partition",
    "kafka_dlt-original-offset",
)

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


def _last(headers: Pairs) -> dict[str, bytes | None]:
    last: dict[str, bytes | None] = {}
    for key, value in headers:
        last[key] = value
    return last


def _text(value: bytes | None) -> str:
    return printable((value or b"").decode("utf-8", "replace"))


def _number(value: bytes | None) -> str:
    text = (value or b"").decode("ascii", "replace")
    return text if text.lstrip("-").isdigit() else "?"


def _fixed(value: bytes | None, size: int) -> str:
    from kheaders.processing import spring_headers as sh

    number = sh.decode_fixed(value, size)
    return "?" if number is None else str(number)


def is_dead_letter(topic: str, headers: Pairs) -> bool:
    """Whether a record read from ``topic`` is a dead letter (see the module's docstring)."""
    keys = {key for key, _ in headers}
    if any(key.startswith(KHEADERS_PREFIX) for key in keys) or _PLAIN_SPRING_FQCN in keys:
        return True
    failed = "kafka_exception-fqcn" in keys or "kafka_key-exception-fqcn" in keys
    return failed and topic.lower().endswith(DEAD_LETTER_SUFFIXES)


def failure(headers: Pairs, redactor: Redactor | None = None) -> Failure | None:
    """The failure ``headers`` describe, or None when they carry none.

    The exception message is shown as ``<redacted>`` where ``redactor`` hides its header.
    """
    from kheaders.processing import spring_headers as sh

    last = _last(headers)
    original = kind = message = None
    message_key = ""
    for topic_key, partition_key, offset_key in (  # the first read: kept across every hop
        (sh.ORIGINAL_TOPIC, sh.ORIGINAL_PARTITION, sh.ORIGINAL_OFFSET),
        _PLAIN_SPRING,
    ):
        if topic_key in last:
            original = f"{_text(last[topic_key])}[{_fixed(last.get(partition_key), 4)}]"
            original += f"@{_fixed(last.get(offset_key), 8)}"
            break
    if original is None and _K_TOPIC in last:
        original = f"{_text(last[_K_TOPIC])}[{_number(last.get(_K_PARTITION))}]"
        original += f"@{_number(last.get(_K_OFFSET))}"
    if _K_TYPE in last:  # written when dead-lettered: the last failure
        kind, message_key = last[_K_TYPE], _K_MESSAGE
        if last.get(_K_FIELD):
            kind = (kind or b"?") + b" (" + (last[_K_FIELD] or b"") + b")"
    else:
        for type_key, msg_key in (
            (sh.EXCEPTION_FQCN, sh.EXCEPTION_MESSAGE),
            (sh.KEY_EXCEPTION_FQCN, sh.KEY_EXCEPTION_MESSAGE),
            (_PLAIN_SPRING_FQCN, _PLAIN_SPRING_MESSAGE),
        ):
            if type_key in last:
                kind, message_key = last[type_key], msg_key
                break
    if original is None and kind is None:
        return None
    error = None
    if kind is not None:
        error = _text(kind)
        message = last.get(message_key)
        if message:
            hidden = redactor is not None and redactor.hides(message_key, message)
            shown = REDACTED if hidden else _text(message)
            if len(shown) > MESSAGE_LIMIT:
                shown = shown[:MESSAGE_LIMIT] + "…"
            error += f": {shown}"
    attempt = None
    if sh.ATTEMPTS in last:
        attempt = sh.decode_attempts(last[sh.ATTEMPTS]) - 1
    return Failure(original, error, attempt if attempt and attempt > 0 else None)


def state_lines(topic: str, headers: Pairs, redactor: Redactor | None = None) -> list[str]:
    """``kheaders tail``'s lines on a record's retry or dead-letter state (none without it).

    A retry record shows its next attempt and when it is due; a dead letter shows that there
    is none; both show where the record came from and the exception with its message.
    """
    from kheaders.processing import describe
    from kheaders.processing import spring_headers as sh

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
    parts = [f"original={found.original}" if found.original else ""]
    parts.append(f"failed={found.error}" if found.error else "")
    return "  ".join(p for p in parts if p)
