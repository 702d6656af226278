"""Reading a received record's headers safely: the one guard around ``Message.headers()``.

confluent-kafka 2.16 cannot read a header key that is not UTF-8 (Kafka allows any bytes;
other clients write them): ``Message.headers()`` returns with a UnicodeDecodeError still set
and caches a list whose key is a NULL pointer. A plain ``msg.headers()`` call raises
SystemError (outside kheaders' exception tree, no offset named) until CPython specializes the
call site; after that the error goes unnoticed and the corrupt list crashes whoever formats
it. Every place that calls ``headers()`` on a confluent ``Message`` goes through
:func:`message_headers`: the Consumer, compaction, LatestState, ``kheaders tail``, the Spark
reader, the dead-letter publisher, and the benchmarks' kheaders readers.
"""

from __future__ import annotations

import operator
from typing import Any

from confluent_kafka import Message

from kheaders import _telemetry
from kheaders._errors import DeserializationError

call_headers = operator.methodcaller("headers")
"""``msg.headers()`` through a C-level call that checks the result.

``methodcaller`` makes the call go through ``PyObject_Vectorcall``, which turns "a result
with an exception set" into a SystemError here, every time, where it can be handled.
"""

HEADER_FAILURES = (SystemError, UnicodeDecodeError)
"""What :data:`call_headers` raises for a record whose header key is not UTF-8."""

_message_headers = Message.headers
"""The C method itself: ``map()`` calls it through ``PyObject_Vectorcall`` too (checked, as
:data:`call_headers` is), without looking the method up by name on every record."""


def unreadable_headers(
    msg: Any, exc: BaseException, replacement: object = None
) -> DeserializationError:
    """The error for a record whose headers confluent-kafka cannot read (a non-UTF-8 key).

    The message's headers are replaced by ``replacement`` first (``set_headers``; ``None``
    unless given), so the corrupt list confluent-kafka cached is never handed out again; its
    key and value are intact. Counted in kheaders' metrics as a ``headers`` failure.
    """
    set_headers = getattr(msg, "set_headers", None)
    if callable(set_headers):
        set_headers(replacement)
    topic = msg.topic()
    _telemetry.deserialization_failed(topic, "headers")
    return DeserializationError(
        f"headers of the record at topic {topic!r} partition {msg.partition()} offset"
        f" {msg.offset()} are unreadable: a header key is not UTF-8 (confluent-kafka cannot"
        f" decode it: {type(exc).__name__}); its key and value are intact",
        message=msg,
        field="headers",
    )


def message_headers(msg: Any) -> Any:
    """``msg.headers()``, guarded: what the message holds (a list of pairs, ``Headers``, or
    ``None``), or DeserializationError (``field="headers"``, naming topic, partition and
    offset) when confluent-kafka cannot read them.

    Works on any object with a ``headers()`` method (test doubles, kheaders' own messages).
    """
    try:
        return call_headers(msg)
    except HEADER_FAILURES as exc:
        raise unreadable_headers(msg, exc) from exc


def headers_of_all(
    msgs: list[Any], replacement: object
) -> tuple[list[Any], list[tuple[int, DeserializationError]]]:
    """``msg.headers()`` of every message of a batch, guarded as :func:`message_headers` is.

    Returns what each message holds (``None`` in place of unreadable headers) and, for each
    message whose headers are unreadable, its position and the error of
    :func:`unreadable_headers` (its headers replaced by ``replacement``). One C-level loop
    for a batch of confluent ``Message`` objects; other objects are called by name.
    """
    lists: list[Any] = []
    failed: list[tuple[int, DeserializationError]] = []
    get: Any = _message_headers if type(msgs[0]) is Message else call_headers
    while True:
        done = len(lists)
        try:  # extend() keeps what map() gave before a failure: it names the failing message
            lists.extend(map(get, msgs[done:] if done else msgs))
        except HEADER_FAILURES as exc:
            i = len(lists)
            failed.append((i, unreadable_headers(msgs[i], exc, replacement)))
            lists.append(None)
        except TypeError:
            if get is call_headers:
                raise
            get = call_headers  # an object that is not a confluent Message
        else:
            return lists, failed
