"""Adapters both ways between kheaders serde and ``confluent_kafka.serialization``.

confluent-kafka's serializers are callables ``(obj, ctx)`` that see headers as
``ctx.headers``: a list of ``(key, value)`` tuples, a dict, or ``None``. Its Schema Registry
serializers in header mode *append* ``(__value_schema_id, 0x01 + GUID)`` to that list (or
set it in the dict) and raise when it is ``None``. The adapters here bridge that to
:class:`~kheaders.Headers` in both directions, with a fresh context for every call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, overload

from confluent_kafka.serialization import Deserializer as ConfluentDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from confluent_kafka.serialization import Serializer as ConfluentSerializer

from kheaders._errors import DecodeError
from kheaders._model.headers import Headers, pairs_of, received
from kheaders._serde.protected import explained, is_encrypted
from kheaders._serde.protocols import Deserializer, Serializer

ConfluentSerde = Callable[[object, SerializationContext | None], object]
"""A confluent-kafka serializer or deserializer: ``(obj, ctx) -> result``."""

Field = Literal["key", "value"] | MessageField

ConfluentHeaderList = list[tuple[str, str | bytes | None]]
"""Headers as confluent-kafka's serializers see them in ``ctx.headers``."""


def _field(field: Field) -> MessageField:
    try:
        result = MessageField(field)
    except ValueError:
        result = MessageField.NONE
    if result is MessageField.NONE:
        raise ValueError(f"field must be 'key' or 'value', got {field!r}")
    return result


def _callable(serde: ConfluentSerde, kind: str) -> ConfluentSerde:
    """``serde`` when it is callable. Raises TypeError naming ``kind`` otherwise."""
    if not callable(serde):
        raise TypeError(f"a confluent {kind} must be callable, got {serde!r}")
    return serde


class FromConfluentSerializer:
    """A kheaders Serializer that runs a confluent-kafka serializer for ``field``.

    Each call builds a new ``SerializationContext(topic, field, headers_list)``; headers the
    confluent serializer appends (e.g. a Schema Registry ``__value_schema_id``) are added to
    the record's Headers, and any other change it makes to the list is applied too.
    Exceptions from the confluent serializer propagate unchanged.
    """

    __slots__ = ("_field", "_serializer")

    def __init__(self, serializer: ConfluentSerde, field: Field = "value") -> None:
        self._serializer = _callable(serializer, "serializer")
        self._field = _field(field)

    def serialize(self, topic: str, headers: Headers, data: object) -> bytes | None:
        items: ConfluentHeaderList = list(pairs_of(headers))
        ctx = SerializationContext(topic, self._field, items)
        result = self._serializer(data, ctx)
        if ctx.headers is not items or items != pairs_of(headers):
            _apply(headers, ctx.headers)
        if result is None or type(result) is bytes:
            return result
        if isinstance(result, bytearray | memoryview):
            return bytes(result)
        raise TypeError(
            f"topic {topic!r}: confluent serializer returned {type(result).__name__}, not bytes"
        )


def _apply(headers: Headers, changed: object) -> None:
    """Make ``headers`` match ``changed``, the ``ctx.headers`` a confluent serializer altered.

    Raises TypeError/ValueError (naming the key) for a header Headers cannot hold; then
    ``headers`` is left as it was.
    """
    if changed is None:
        headers.clear()
        return
    count = len(headers)
    if type(changed) is list and changed[:count] == pairs_of(headers):
        for header in Headers(changed[count:]):
            headers.add(header)
        return
    rebuilt = Headers(changed)  # type: ignore[arg-type]
    headers.clear()
    for header in rebuilt:
        headers.add(header)


class FromConfluentDeserializer:
    """A kheaders Deserializer that runs a confluent-kafka deserializer for ``field``.

    Each call builds a new ``SerializationContext`` whose ``headers`` is a fresh list of
    ``(key, value)`` tuples (``None`` when the record has none, as confluent-kafka's
    consumer gives it), so nothing the confluent code does can touch the record's Headers.
    Exceptions from the confluent deserializer propagate unchanged, but for a value that is
    encrypted (it carries ``kheaders.protect``): a DecodeError then names that cause
    (the confluent exception chained).
    """

    __slots__ = ("_deserializer", "_field")

    def __init__(self, deserializer: ConfluentSerde, field: Field = "value") -> None:
        self._deserializer = _callable(deserializer, "deserializer")
        self._field = _field(field)

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> object:
        items: ConfluentHeaderList | None = list(pairs_of(headers)) if headers else None
        try:
            return self._deserializer(data, SerializationContext(topic, self._field, items))
        except Exception as exc:
            if self._field is not MessageField.VALUE or not is_encrypted(headers):
                raise
            failure = f"{type(exc).__name__}: {exc}"
            raise DecodeError(explained(topic, failure, headers)) from exc


@overload
def from_confluent(
    serde: ConfluentSerializer, field: Field = ..., *, kind: None = ...
) -> FromConfluentSerializer: ...
@overload
def from_confluent(
    serde: ConfluentDeserializer, field: Field = ..., *, kind: None = ...
) -> FromConfluentDeserializer: ...
@overload
def from_confluent(
    serde: ConfluentSerde, field: Field = ..., *, kind: Literal["serializer"]
) -> FromConfluentSerializer: ...
@overload
def from_confluent(
    serde: ConfluentSerde, field: Field = ..., *, kind: Literal["deserializer"]
) -> FromConfluentDeserializer: ...
def from_confluent(
    serde: object,
    field: Field = "value",
    *,
    kind: Literal["serializer", "deserializer"] | None = None,
) -> FromConfluentSerializer | FromConfluentDeserializer:
    """Wrap a confluent-kafka serializer or deserializer for the key or value ``field``.

    Subclasses of confluent's ``Serializer``/``Deserializer`` are recognised; for a plain
    callable say ``kind="serializer"`` or ``kind="deserializer"``.

    >>> from confluent_kafka.serialization import StringSerializer
    >>> from_confluent(StringSerializer(), "key").serialize("t", Headers(), "k")
    b'k'

    Raises TypeError when the kind cannot be told, ValueError for a bad ``field``.
    """
    if kind is None:
        if isinstance(serde, ConfluentSerializer):
            kind = "serializer"
        elif isinstance(serde, ConfluentDeserializer):
            kind = "deserializer"
        else:
            raise TypeError(
                f"cannot tell whether {serde!r} serializes or deserializes:"
                " pass kind='serializer' or kind='deserializer'"
            )
    if not callable(serde):
        raise TypeError(f"a confluent {kind} must be callable, got {serde!r}")
    if kind == "serializer":
        return FromConfluentSerializer(serde, field)
    if kind == "deserializer":
        return FromConfluentDeserializer(serde, field)
    raise ValueError(f"kind must be 'serializer' or 'deserializer', got {kind!r}")


_NO_HEADERS = Headers().close()


def _context(ctx: SerializationContext | None) -> tuple[str, object]:
    if ctx is None:
        return "", None
    return ctx.topic, ctx.headers


class ToConfluentSerializer(ConfluentSerializer):
    """A confluent-kafka serializer (``__call__(obj, ctx)``) running a kheaders Serializer.

    ``ctx.headers`` (a list of pairs, a dict, or ``None``) is read into a writable
    :class:`~kheaders.Headers`; headers the kheaders serializer adds or changes are written
    back into that same list or dict, so confluent's ``SerializingProducer`` sends them.

    Raises TypeError naming the topic when the serializer changed the headers but
    ``ctx.headers`` cannot carry them back (``None``: pass ``headers=[]`` to ``produce``).
    """

    __slots__ = ("_serializer",)

    def __init__(self, serializer: Serializer) -> None:
        if not callable(getattr(serializer, "serialize", None)):
            raise TypeError(f"{serializer!r} has no serialize() method")
        self._serializer = serializer

    def __call__(self, obj: object, ctx: SerializationContext | None = None) -> bytes | None:
        topic, given = _context(ctx)
        headers = Headers() if given is None else Headers(given)  # type: ignore[arg-type]
        before = headers.to_list()
        result = self._serializer.serialize(topic, headers, obj)
        if pairs_of(headers) != before:
            _write_back(topic, headers, given)
        return result


def _write_back(topic: str, headers: Headers, given: object) -> None:
    if isinstance(given, list):
        given[:] = headers.to_list()
    elif isinstance(given, dict):
        given.clear()
        given.update(headers.to_dict())
    else:
        kind = "None" if given is None else type(given).__name__
        raise TypeError(
            f"topic {topic!r}: the serializer set headers but ctx.headers is {kind};"
            " pass a list (e.g. headers=[]) to produce() so they can be sent"
        )


class ToConfluentDeserializer(ConfluentDeserializer):
    """A confluent-kafka deserializer (``__call__(value, ctx)``) running a kheaders Deserializer.

    ``ctx.headers`` as confluent-kafka's consumer gives it (a list of ``(str, bytes)``
    pairs, or ``None``; a dict is also accepted) is wrapped as read-only Headers.
    """

    __slots__ = ("_deserializer",)

    def __init__(self, deserializer: Deserializer) -> None:
        if not callable(getattr(deserializer, "deserialize", None)):
            raise TypeError(f"{deserializer!r} has no deserialize() method")
        self._deserializer = deserializer

    def __call__(self, value: bytes | None, ctx: SerializationContext | None = None) -> object:
        topic, given = _context(ctx)
        if given is None:
            headers = _NO_HEADERS
        elif type(given) is list:
            headers = received(given)
        else:
            headers = Headers(given).close()  # type: ignore[arg-type]
        return self._deserializer.deserialize(topic, headers, value)


@overload
def to_confluent(serde: Serializer) -> ToConfluentSerializer: ...
@overload
def to_confluent(serde: Deserializer) -> ToConfluentDeserializer: ...
def to_confluent(
    serde: Serializer | Deserializer,
) -> ToConfluentSerializer | ToConfluentDeserializer:
    """Wrap a kheaders Serializer or Deserializer as a confluent-kafka one.

    The result plugs into ``SerializingProducer``/``DeserializingConsumer`` (``key.serializer``,
    ``value.deserializer``, ...); key or value comes from the context confluent passes.

    >>> from kheaders import JsonSerializer
    >>> from confluent_kafka.serialization import MessageField, SerializationContext
    >>> sent = []
    >>> to_confluent(JsonSerializer())([1], SerializationContext("t", MessageField.VALUE, sent))
    b'[1]'
    >>> sent
    [Header(key='content-type', value=b'application/json')]

    Raises TypeError for an object with neither ``serialize`` nor ``deserialize``.
    """
    if callable(getattr(serde, "serialize", None)):
        return ToConfluentSerializer(serde)  # type: ignore[arg-type]
    if callable(getattr(serde, "deserialize", None)):
        return ToConfluentDeserializer(serde)  # type: ignore[arg-type]
    raise TypeError(f"{serde!r} has neither serialize() nor deserialize()")
