"""The headers a failed record is republished with: Spring Kafka's contract or kheaders'.

The consumed headers come first, in their order, duplicates kept; the contract's own headers
follow (see :mod:`kheaders.deadletter.spring` and :mod:`kheaders.deadletter._own`).
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from typing import Any

from confluent_kafka import Message

from kheaders._errors import DeserializationError
from kheaders._model.headers import Headers, trusted
from kheaders._model.received import message_headers
from kheaders.deadletter import _own
from kheaders.deadletter import spring as sh
from kheaders.deadletter._exceptions import failing_exception, root_cause

Pairs = list[tuple[str, bytes | None]]

MAX_MESSAGE = 4096
"""Characters of an exception's message kept in ``kafka_exception-message`` and
``kheaders.dlt.error.message``."""
MAX_STACKTRACE = 16384
"""Characters of the traceback kept in ``kafka_exception-stacktrace`` (its end is kept)."""


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


def _fqcn(error: BaseException) -> bytes:
    return f"{type(error).__module__}.{type(error).__qualname__}".encode()  # Java's FQCN


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
    """``consumed`` plus Spring Kafka's failure and retry headers for the next hop, in the
    order Spring 4.1's ``DeadLetterPublishingRecoverer`` writes them for the same failure.

    The exception headers come first: each written one replaces its earlier values (the
    other names are left alone); then the ``kafka_original-*`` headers that are absent (so
    they are written at the first failure only); then one ``retry_topic-*`` set, appended to
    the earlier hops' sets (readers take the last value; ``retry_topic-original-timestamp``
    keeps the first hop's value). Never raises for a record's content (a missing timestamp
    is written as -1, as Java's records say).
    """
    shown, field = failing_exception(error)
    key = field == "key"
    message = str(shown)[:MAX_MESSAGE]
    trace = "".join(traceback.format_exception(error))[-MAX_STACKTRACE:]  # its end: the raise
    failure: Pairs = [
        (sh.KEY_EXCEPTION_FQCN if key else sh.EXCEPTION_FQCN, _fqcn(shown)),
        (sh.EXCEPTION_CAUSE_FQCN, _fqcn(root_cause(error))),
        (sh.KEY_EXCEPTION_MESSAGE if key else sh.EXCEPTION_MESSAGE, _utf8(message)),
        (sh.KEY_EXCEPTION_STACKTRACE if key else sh.EXCEPTION_STACKTRACE, _utf8(trace)),
    ]
    written = {name for name, _ in failure}
    out: Pairs = [pair for pair in consumed if pair[0] not in written]
    out.extend(failure)
    ts_type, ts = timestamp
    ts_name = sh.TIMESTAMP_TYPES.get(ts_type, sh.NO_TIMESTAMP_TYPE)
    if ts_type not in sh.TIMESTAMP_TYPES:
        ts = -1
    originals: Pairs = [
        (sh.ORIGINAL_TOPIC, topic.encode()),
        (sh.ORIGINAL_PARTITION, sh.encode_int(partition)),
        (sh.ORIGINAL_OFFSET, sh.encode_long(offset)),
        (sh.ORIGINAL_TIMESTAMP, sh.encode_long(ts)),
        (sh.ORIGINAL_TIMESTAMP_TYPE, ts_name.encode()),
    ]
    if group:
        originals.append((sh.ORIGINAL_CONSUMER_GROUP, group.encode()))
    last = dict(consumed)
    out.extend(pair for pair in originals if pair[0] not in last)
    first = last.get(sh.ORIGINAL_TIMESTAMP_RETRY)  # the first hop's, kept when it decodes
    if sh.decode_timestamp(first) is None:
        first = sh.encode_big_integer(ts)
    out.append((sh.ORIGINAL_TIMESTAMP_RETRY, first))
    out.append((sh.ATTEMPTS, sh.encode_int(next_attempt)))
    out.append((sh.BACKOFF_TIMESTAMP, sh.encode_big_integer(due_ms)))
    return out


def original_headers(message: Message) -> Pairs:
    """A consumed record's headers as pairs (none when unreadable: sent without, as consumed)."""
    try:
        raw: Any = message_headers(message)
    except DeserializationError:  # unreadable (a non-UTF-8 key): sent without, as consumed
        return []
    return raw.to_list() if isinstance(raw, Headers) else Headers(raw).to_list()


def dead_letter_headers(
    message: Message, error: BaseException, *, group_id: str | None = None
) -> Headers:
    """The original record's headers followed by the ``kheaders.dlt.*`` failure headers.

    For a :class:`DeserializationError` the failing exception is its cause (the
    deserializer's own error), not the wrapper.

    >>> msg = Message(topic="orders", partition=2, offset=7, key=b"k", value=b"{",
    ...               headers=[("trace", b"1")], timestamp=(1, 1700000000000))
    >>> h = dead_letter_headers(msg, ValueError("bad json"), group_id="billing")
    >>> [k for k, _ in h][:3], h.last_value("kheaders.dlt.error.type")
    (['trace', 'kheaders.dlt.original.topic', 'kheaders.dlt.original.partition'], b'builtins.ValueError')
    """  # noqa: E501
    cause, field = failing_exception(error)
    out = original_headers(message)
    out.append((_own.ORIGINAL_TOPIC, (message.topic() or "").encode()))
    out.append((_own.ORIGINAL_PARTITION, str(message.partition()).encode()))
    out.append((_own.ORIGINAL_OFFSET, str(message.offset()).encode()))
    ts_type, ts = message.timestamp()
    if ts_type in sh.TIMESTAMP_TYPES:
        out.append((_own.ORIGINAL_TIMESTAMP, str(ts).encode()))
        out.append((_own.ORIGINAL_TIMESTAMP_TYPE, sh.TIMESTAMP_TYPES[ts_type].encode()))
    if group_id:
        out.append((_own.CONSUMER_GROUP, group_id.encode()))
    if field is not None:
        out.append((_own.ERROR_FIELD, field.encode()))
    out.append((_own.ERROR_TYPE, _fqcn(cause)))
    out.append((_own.ERROR_MESSAGE, _utf8(str(cause)[:MAX_MESSAGE])))
    return trusted(out, read_only=False)


def without_retry_state(consumed: Sequence[tuple[str, bytes | None]]) -> Pairs:
    """``consumed`` without the retry and failure headers (Spring's and kheaders'): what a
    replayed dead letter carries back to its original topic."""
    owned = frozenset((*sh.RETRY_HEADERS, *sh.EXCEPTION_HEADERS, *sh.ORIGINAL_HEADERS))
    return [p for p in consumed if p[0] not in owned and not p[0].startswith(_own.PREFIX)]
