"""The serializer and deserializer contracts (KIP-82's ExtendedSerializer: they see headers).

A serializer may also see the rest of its record: one whose ``serialize`` takes a keyword
``context`` is given a :class:`SerializationContext` (topic, headers, field and the record
key) by the producer; one without it is called ``serialize(topic, headers, data)`` as always.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from kheaders._model.headers import Headers


class SerializationContext:
    """The record a serializer's data belongs to, given as ``serialize(..., context=...)``.

    ``topic`` and ``headers`` are those passed by position too (the live, writable headers);
    ``field`` is ``"key"`` or ``"value"``; ``key`` is the record key as the producer sends
    it: what the key serializer returned (the key as given when there is none), or, for the
    key serializer itself, the key as given. One per record and serializer call, never shared
    between the key and the value call; read it, do not change it.

    >>> from kheaders import Headers
    >>> SerializationContext("orders", Headers(), b"k-1", "value")
    SerializationContext(topic='orders', field='value', key=b'k-1')
    """

    __slots__ = ("field", "headers", "key", "topic")

    def __init__(
        self, topic: str, headers: Headers, key: Any, field: Literal["key", "value"] | str
    ) -> None:
        self.topic = topic
        self.headers = headers
        self.key = key
        self.field = field

    def __repr__(self) -> str:
        return f"SerializationContext(topic={self.topic!r}, field={self.field!r}, key={self.key!r})"


@runtime_checkable
class Serializer(Protocol):
    """Turns a key or value into bytes; may add headers (e.g. a content type).

    ``headers`` is the record's live, writable :class:`Headers`. Returning ``None`` produces
    a null key/value. Any exception fails this record only (the producer wraps it in
    :class:`~kheaders.SerializationError`). A ``serialize`` that also takes a keyword
    ``context`` is given the record's :class:`SerializationContext` (see
    :class:`ContextSerializer`).
    """

    def serialize(self, topic: str, headers: Headers, data: Any) -> bytes | None: ...


@runtime_checkable
class ContextSerializer(Protocol):
    """A :class:`Serializer` that also reads its record (the key, for one): producers call it
    ``serialize(topic, headers, data, context=SerializationContext(...))``. ``context`` has a
    default (``None``: called outside a producer), so it is a :class:`Serializer` too."""

    def serialize(
        self,
        topic: str,
        headers: Headers,
        data: Any,
        *,
        context: SerializationContext | None = None,
    ) -> bytes | None: ...


def takes_context(serialize: Callable[..., object]) -> bool:
    """True when ``serialize`` (a bound method) takes a keyword ``context``: asked once, when
    a producer is built. A callable whose signature cannot be read is called the old way."""
    try:
        params = inspect.signature(serialize).parameters
    except (TypeError, ValueError):
        return False
    param = params.get("context")
    return param is not None and param.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


@runtime_checkable
class Deserializer(Protocol):
    """Turns a record's key or value bytes back into an object, seeing its (read-only) headers.

    Any exception makes the consumer raise :class:`~kheaders.DeserializationError` carrying
    the raw record; the consumer has then moved past that record only.
    """

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> Any: ...
