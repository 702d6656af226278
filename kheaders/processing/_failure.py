"""The headers a failed record is republished with: Spring Kafka's contract or kheaders'.

The consumed headers come first, in their order, duplicates kept; only the headers the
contract owns are added or replaced (see :mod:`kheaders.processing.spring_headers`).
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence

from kheaders._errors import DeserializationError
from kheaders._model.redact import printable
from kheaders.processing import spring_headers as sh

Pairs = list[tuple[str, bytes | None]]

MAX_MESSAGE = 4096
"""Characters of an exception's message kept in ``kafka_exception-message``."""
MAX_LOGGED = 500
"""Characters of an exception's message kept in ``ProcessingError`` and log events."""
MAX_STACKTRACE = 16384
"""Characters of the traceback kept in ``kafka_exception-stacktrace`` (its end is kept)."""

_REPLACED = frozenset((*sh.EXCEPTION_HEADERS, sh.ATTEMPTS, sh.BACKOFF_TIMESTAMP))


def qualified_name(kind: type[BaseException]) -> str:
    """``module.QualifiedName`` of an exception type (``builtins.ValueError``)."""
    return f"{kind.__module__}.{kind.__qualname__}"


def failing_exception(error: BaseException) -> tuple[BaseException, bool]:
    """The exception that says why (a deserializer's own, for a DeserializationError) and
    whether it concerns the record's key."""
    if isinstance(error, DeserializationError):
        return (error.__cause__ or error), error.field == "key"
    return error, False


def describe_error(error: BaseException, limit: int = MAX_LOGGED) -> str:
    """``Type: message`` of a handler's exception, the message cut to ``limit`` characters
    and escaped (no newline or terminal control reaches a log line). The message is the one
    the handler's own exception carries: kheaders adds no key or value to it. A
    DeserializationError shows kheaders' own message (topic, partition, offset, field and
    the deserializer's exception type), never the deserializer's, which may quote the bytes.

    >>> describe_error(ValueError("card\\nexpired")), describe_error(KeyError("x" * 9), 4)
    ('ValueError: card\\\\nexpired', "KeyError: 'xxx...")
    """
    name = type(error).__qualname__
    text = str(error)
    if not text:
        return name
    if len(text) > limit:
        text = text[:limit] + "..."
    return f"{name}: {printable(text)}"


def root_cause(error: BaseException) -> BaseException:
    """The last exception of ``error``'s ``__cause__`` chain (``error`` itself without one)."""
    seen = {id(error)}
    while error.__cause__ is not None and id(error.__cause__) not in seen:
        error = error.__cause__
        seen.add(id(error))
    return error


def _text(value: str, limit: int, *, keep_end: bool = False) -> bytes:
    cut = value[-limit:] if keep_end else value[:limit]
    return cut.encode("utf-8", "backslashreplace")


def spring_headers(
    consumed: Sequence[tuple[str, bytes | None]],
    *,
    topic: str,
    partition: int,
    offset: int,
    timestamp: tuple[int, int],
    group: str | None,
    error: BaseException,
    next_attempt: int,
    due_ms: int,
) -> Pairs:
    """``consumed`` plus Spring Kafka's retry and failure headers for the next hop.

    The ``kafka_original-*`` headers are added at the first failure only (each when
    absent), ``retry_topic-original-timestamp`` keeps its first value, the exception and
    ``retry_topic-attempts``/``-backoff-timestamp`` headers are replaced. Never raises for
    a record's content (a missing timestamp is written as -1, as Java's records say).
    """
    present = {key for key, _ in consumed}
    out: Pairs = [pair for pair in consumed if pair[0] not in _REPLACED]
    ts_type, ts = timestamp
    if ts_type not in sh.TIMESTAMP_TYPES:
        ts = -1
    ts_name = sh.TIMESTAMP_TYPES.get(ts_type, sh.NO_TIMESTAMP_TYPE)
    originals: list[tuple[str, bytes | None]] = [
        (sh.ORIGINAL_TOPIC, topic.encode()),
        (sh.ORIGINAL_PARTITION, sh.encode_int(partition)),
        (sh.ORIGINAL_OFFSET, sh.encode_long(offset)),
        (sh.ORIGINAL_TIMESTAMP, sh.encode_long(ts)),
        (sh.ORIGINAL_TIMESTAMP_TYPE, ts_name.encode()),
    ]
    if group:
        originals.append((sh.ORIGINAL_CONSUMER_GROUP, group.encode()))
    out.extend(pair for pair in originals if pair[0] not in present)
    shown, for_key = failing_exception(error)
    out.append((sh.KEY_EXCEPTION_FQCN if for_key else sh.EXCEPTION_FQCN, _fqcn(shown)))
    out.append((sh.EXCEPTION_CAUSE_FQCN, _fqcn(root_cause(error))))
    message = sh.KEY_EXCEPTION_MESSAGE if for_key else sh.EXCEPTION_MESSAGE
    out.append((message, _text(str(shown), MAX_MESSAGE)))
    trace = "".join(traceback.format_exception(error))
    stack = sh.KEY_EXCEPTION_STACKTRACE if for_key else sh.EXCEPTION_STACKTRACE
    out.append((stack, _text(trace, MAX_STACKTRACE, keep_end=True)))
    out = [pair for pair in out if pair[0] != sh.ORIGINAL_TIMESTAMP_RETRY]
    out.append((sh.ORIGINAL_TIMESTAMP_RETRY, _first_timestamp(consumed, ts)))
    out.append((sh.ATTEMPTS, sh.encode_int(next_attempt)))
    out.append((sh.BACKOFF_TIMESTAMP, sh.encode_big_integer(due_ms)))
    return out


def _fqcn(error: BaseException) -> bytes:
    return qualified_name(type(error)).encode()


def _first_timestamp(consumed: Sequence[tuple[str, bytes | None]], ts: int) -> bytes:
    """The record's ``retry_topic-original-timestamp`` when valid (1-8 bytes), else ``ts``."""
    for key, value in reversed(consumed):
        if key == sh.ORIGINAL_TIMESTAMP_RETRY:
            if value is not None and 1 <= len(value) <= 8:
                return value
            break
    return sh.encode_big_integer(ts)


def without_retry_state(consumed: Sequence[tuple[str, bytes | None]]) -> Pairs:
    """``consumed`` without the retry and failure headers (Spring's and kheaders'): what a
    replayed dead letter carries back to its original topic."""
    owned = frozenset((*sh.RETRY_HEADERS, *sh.EXCEPTION_HEADERS, *sh.ORIGINAL_HEADERS))
    return [p for p in consumed if p[0] not in owned and not p[0].startswith("kheaders.dlt.")]
