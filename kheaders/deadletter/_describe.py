"""Retry and dead-letter headers described for people (``kheaders tail``, ``dlt replay``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from kheaders._model.redact import Redactor
from kheaders.deadletter import spring as sh
from kheaders.deadletter._read import SPRING_ORIGIN, Pairs, failure, is_dead_letter, text, where


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
