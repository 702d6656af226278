"""The key and value bytes a record had when it was consumed, kept for whoever republishes it.

A kheaders consumer that runs deserializers replaces a record's key and value (``set_key`` /
``set_value``); a dead letter must republish the bytes consumed, never re-serialize. A
confluent ``Message`` takes no attributes and no weak references, and a subclass would have
to be rebuilt from what librdkafka returned (losing what its constructor does not take: the
share group's delivery count), so the bytes are kept here, in the client layer, keyed by the
one object of ours the record holds: its read-only Headers (given to it by the consumer,
always a new object for a deserialized record). The Headers model itself knows nothing of
them: the entry is tied to the Headers object by a weak reference and goes when it goes, so
the bytes live exactly as long as the record's Headers. A copy of the Headers
(``Headers(h)``, ``copy``, pickling) is another object, without them; a record whose headers
were replaced with ``set_headers`` has lost them (:func:`consumed_bytes` then returns its own
key and value).

The one way for both consumers of the rule: the :class:`~kheaders.Consumer` (sync, share
group, and kheaders.aio through it) calls :func:`keep_consumed`; the processors hold the
bytes they read in their own steps and never look here.
"""

from __future__ import annotations

import weakref

from confluent_kafka import Message

from kheaders._errors import DeserializationError
from kheaders._model.headers import Headers
from kheaders._model.received import message_headers


class _Kept(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to a record's Headers holding the record's consumed key and value."""

    __slots__ = ("key", "value", "where")

    key: bytes | None
    value: bytes | None
    where: int


_kept: dict[int, _Kept] = {}
"""id(Headers) -> its entry; an entry leaves when its Headers are collected."""


def _forget(entry: _Kept) -> None:
    # the weak reference's callback: runs before the id can be reused by another object
    if _kept.get(entry.where) is entry:
        del _kept[entry.where]


def keep_consumed(headers: Headers, key: bytes | None, value: bytes | None) -> None:
    """Keep ``key`` and ``value`` (the record's consumed bytes) for as long as ``headers``
    (the record's own, a new object) live."""
    entry = _Kept(headers, _forget)
    entry.key = key
    entry.value = value
    entry.where = where = id(headers)
    _kept[where] = entry


def consumed_bytes(msg: Message) -> tuple[bytes | None, bytes | None]:
    """The key and value ``msg`` had when it was consumed, before any deserializer ran.

    A record a kheaders consumer deserialized has them kept (until its headers are replaced
    with ``set_headers``); any other record's own ``key()`` and ``value()`` are returned.
    """
    try:
        headers = message_headers(msg)
    except DeserializationError:  # unreadable headers (a raw record): nothing kept for them
        headers = None  # (and the corrupt list confluent-kafka cached is replaced)
    entry = _kept.get(id(headers)) if headers is not None else None
    if entry is not None and entry() is headers:
        return entry.key, entry.value
    return msg.key(), msg.value()
