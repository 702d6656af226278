"""The serializer and deserializer contracts (KIP-82's ExtendedSerializer: they see headers)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from kheaders._model.headers import Headers


@runtime_checkable
class Serializer(Protocol):
    """Turns a key or value into bytes; may add headers (e.g. a content type).

    ``headers`` is the record's live, writable :class:`Headers`. Returning ``None`` produces
    a null key/value. Any exception fails this record only (the producer wraps it in
    :class:`~kheaders.SerializationError`).
    """

    def serialize(self, topic: str, headers: Headers, data: Any) -> bytes | None: ...


@runtime_checkable
class Deserializer(Protocol):
    """Turns a record's key or value bytes back into an object, seeing its (read-only) headers.

    Any exception makes the consumer raise :class:`~kheaders.DeserializationError` carrying
    the raw record; the consumer has then moved past that record only.
    """

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> Any: ...
