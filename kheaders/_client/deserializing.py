"""The one deserialization rule, for the Consumer and the processors alike.

Key first, then value; both applied or neither (the record keeps its consumed bytes when
either fails). A failure raises :class:`DeserializationError` carrying the untouched record
and naming the field, topic, partition, offset and the deserializer's exception: its type,
and its message when kheaders wrote it (a :class:`KHeadersError` names the cause, never the
bytes); another library's message may quote the bytes, so it stays on ``__cause__`` only.
A protected record refused by ``kheaders.protect`` stays an :class:`IntegrityError` (a
DeserializationError too), so the Consumer and the processors treat it alike: never
retried, dead-lettered with its consumed bytes.

A deserializer whose ``deserialize`` takes a ``context=`` keyword (asked once, when the
client is built: :func:`in_context`) gets a :class:`~kheaders.SerializationContext` whose
``key`` is the record key as consumed (bytes), as a serializer's gets the key as sent; the
others are called ``deserialize(topic, headers, data)`` as always.
"""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka import Message

from kheaders import _telemetry
from kheaders._errors import DeserializationError, IntegrityError, KHeadersError
from kheaders._model.headers import Headers
from kheaders._serde.protocols import SerializationContext, takes_context

Deserialize = Callable[[str, Headers, object], object]


class InContext:
    """A bound ``deserialize`` that takes ``context=``: :func:`deserialize` calls
    :meth:`with_key` with the record's consumed key."""

    __slots__ = ("deserialize", "field")

    def __init__(self, field: str, deserialize: Callable[..., object]) -> None:
        self.field = field
        self.deserialize = deserialize

    def with_key(self, topic: str, headers: Headers, data: object, key: object) -> object:
        """``data`` deserialized with a context carrying ``key`` (the consumed key bytes)."""
        context = SerializationContext(topic, headers, key, self.field)
        return self.deserialize(topic, headers, data, context=context)

    def __call__(self, topic: str, headers: Headers, data: object) -> object:
        """Called without a record: the context carries no key (None)."""
        return self.with_key(topic, headers, data, None)


def in_context(
    field: str, deserialize: Callable[..., object] | None
) -> Callable[..., object] | None:
    """``deserialize`` as :func:`deserialize` calls it: wrapped in :class:`InContext` when its
    signature names ``context``, else as given."""
    if deserialize is None or not takes_context(deserialize):
        return deserialize
    return InContext(field, deserialize)


def deserialize(
    msg: Message,
    headers: Headers,
    key_de: Callable[..., object] | None,
    value_de: Callable[..., object] | None,
) -> None:
    """Deserialize ``msg``'s key and value in place with ``headers``.

    Raises DeserializationError (IntegrityError for a refused protected record) carrying
    ``msg`` untouched.
    """
    topic = msg.topic() or ""
    raw_key, raw_value = msg.key(), msg.value()
    field = "key"
    try:
        if key_de is None:
            key = None
        elif type(key_de) is InContext:
            key = key_de.with_key(topic, headers, raw_key, raw_key)
        else:
            key = key_de(topic, headers, raw_key)
        field = "value"
        if value_de is None:
            value = None
        elif type(value_de) is InContext:
            value = value_de.with_key(topic, headers, raw_value, raw_key)
        else:
            value = value_de(topic, headers, raw_value)
    except Exception as exc:
        _telemetry.deserialization_failed(topic, field)
        ours = isinstance(exc, KHeadersError)
        why = f"{type(exc).__name__}: {exc}" if ours else type(exc).__name__
        raise (IntegrityError if isinstance(exc, IntegrityError) else DeserializationError)(
            f"{field} deserializer failed for the record at topic {topic!r} partition"
            f" {msg.partition()} offset {msg.offset()}: {why}",
            message=msg,
            field=field,
        ) from exc
    if key_de is not None:
        msg.set_key(key)
    if value_de is not None:
        msg.set_value(value)
