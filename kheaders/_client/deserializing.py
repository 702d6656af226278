"""The one deserialization rule, for the Consumer and the processors alike.

Key first, then value; both applied or neither (the record keeps its consumed bytes when
either fails). A failure raises :class:`DeserializationError` carrying the untouched record
and naming the field, topic, partition, offset and the deserializer's exception: its type,
and its message when kheaders wrote it (a :class:`KHeadersError` names the cause, never the
bytes); another library's message may quote the bytes, so it stays on ``__cause__`` only.
A protected record refused by ``kheaders.protect`` stays an :class:`IntegrityError` (a
DeserializationError too), so the Consumer and the processors treat it alike: never
retried, dead-lettered with its consumed bytes.
"""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka import Message

from kheaders import _telemetry
from kheaders._errors import DeserializationError, IntegrityError, KHeadersError
from kheaders._model.headers import Headers

Deserialize = Callable[[str, Headers, object], object]


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
        key = key_de(topic, headers, raw_key) if key_de is not None else None
        field = "value"
        value = value_de(topic, headers, raw_value) if value_de is not None else None
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
