"""Retry and dead-letter headers described for people (``kheaders tail``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from kheaders._model.redact import printable
from kheaders.processing import spring_headers as sh


def _iso(ms: int) -> str:
    try:
        stamp = dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return stamp.replace("+00:00", "Z")


def _text(value: bytes | None) -> str:
    return printable((value or b"").decode("utf-8", "replace"))


def describe(headers: Iterable[tuple[str, bytes | None]]) -> list[str]:
    """Lines decoding a record's Spring retry / dead-letter headers (none without them).

    Never raises for malformed values: they are shown as such.

    >>> describe([("retry_topic-attempts", b"\\x00\\x00\\x00\\x02"),
    ...           ("kafka_original-topic", b"orders"),
    ...           ("kafka_original-partition", b"\\x00\\x00\\x00\\x01"),
    ...           ("kafka_original-offset", b"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x2a")])
    ['retry: next attempt 2', 'original: orders[1]@42']
    """
    last: dict[str, bytes | None] = {}
    for key, value in headers:
        last[key] = value
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
    if sh.ORIGINAL_TOPIC in last:
        partition = sh.decode_fixed(last.get(sh.ORIGINAL_PARTITION), 4)
        offset = sh.decode_fixed(last.get(sh.ORIGINAL_OFFSET), 8)
        where = f"{_text(last[sh.ORIGINAL_TOPIC])}[{partition if partition is not None else '?'}]"
        where += f"@{offset if offset is not None else '?'}"
        ts = sh.decode_fixed(last.get(sh.ORIGINAL_TIMESTAMP), 8)
        if ts is not None and ts >= 0:
            where += f" at {_iso(ts)}"
        if last.get(sh.ORIGINAL_CONSUMER_GROUP):
            where += f" (group {_text(last[sh.ORIGINAL_CONSUMER_GROUP])})"
        lines.append("original: " + where)
    for name in (sh.EXCEPTION_FQCN, sh.KEY_EXCEPTION_FQCN):
        if name in last:
            lines.append(f"failed: {_text(last[name])}")
    return lines
