"""Dead-letter publishing: a record that could not be processed goes, byte for byte, to another
topic with headers that say where it came from and why it failed.

The republished record has the raw key, the raw value and the original headers, in order,
followed by these headers (UTF-8 text; numbers in decimal):

=======================================  ===================================================
``kheaders.dlt.original.topic``          topic the record was read from
``kheaders.dlt.original.partition``      its partition
``kheaders.dlt.original.offset``         its offset
``kheaders.dlt.original.timestamp``      its timestamp in ms (absent when it had none)
``kheaders.dlt.original.timestamp.type`` ``CreateTime`` or ``LogAppendTime`` (with the above)
``kheaders.dlt.consumer.group``          the consumer group (absent when unknown)
``kheaders.dlt.error.field``             ``key`` or ``value`` for a deserialization failure
``kheaders.dlt.error.type``              the failing exception's ``module.QualifiedName``
``kheaders.dlt.error.message``           its message (cut to 4096 characters)
=======================================  ===================================================

For a :class:`DeserializationError` the failing exception is its cause (the deserializer's
own error), not the wrapper. ``publish(..., headers=...)`` adds headers after these.

The record's key and value are republished as they were consumed, never re-serialized: a
DeserializationError carries them, and a record a kheaders consumer deserialized keeps them
(:func:`~kheaders._client.consumer.consumed_bytes`). ``key=`` / ``value=`` are for a record
that lost them: one decoded elsewhere, or whose headers were replaced with ``set_headers``.
"""

from __future__ import annotations

from collections.abc import Callable

import confluent_kafka
from confluent_kafka import KafkaError, Message

from kheaders import _telemetry
from kheaders._client.consumer import consumed_bytes
from kheaders._client.producer import Producer
from kheaders._errors import DeserializationError
from kheaders._model.headers import Header, Headers, HeaderTypes, pairs_of, trusted
from kheaders._model.limits import check_sendable
from kheaders._model.received import message_headers

PREFIX = "kheaders.dlt."
ORIGINAL_TOPIC = "kheaders.dlt.original.topic"
ORIGINAL_PARTITION = "kheaders.dlt.original.partition"
ORIGINAL_OFFSET = "kheaders.dlt.original.offset"
ORIGINAL_TIMESTAMP = "kheaders.dlt.original.timestamp"
ORIGINAL_TIMESTAMP_TYPE = "kheaders.dlt.original.timestamp.type"
CONSUMER_GROUP = "kheaders.dlt.consumer.group"
ERROR_FIELD = "kheaders.dlt.error.field"
ERROR_TYPE = "kheaders.dlt.error.type"
ERROR_MESSAGE = "kheaders.dlt.error.message"
MAX_ERROR_MESSAGE = 4096

_CONSUMED = object()
"""``publish``'s default for ``key``/``value``: the record's own, which must be bytes."""

_TIMESTAMP_TYPES = {
    confluent_kafka.TIMESTAMP_CREATE_TIME: "CreateTime",
    confluent_kafka.TIMESTAMP_LOG_APPEND_TIME: "LogAppendTime",
}


def _original_headers(message: Message) -> list[tuple[str, bytes | None]]:
    try:
        raw: object = message_headers(message)
    except DeserializationError:  # unreadable (a non-UTF-8 key): sent without, as consumed
        return []
    if raw is None:
        return []
    if isinstance(raw, Headers):
        return raw.to_list()
    return Headers(raw).to_list()  # type: ignore[arg-type]


def dead_letter_headers(
    message: Message, error: BaseException, *, group_id: str | None = None
) -> Headers:
    """The original record's headers followed by the ``kheaders.dlt.*`` failure headers.

    >>> msg = Message(topic="orders", partition=2, offset=7, key=b"k", value=b"{",
    ...               headers=[("trace", b"1")], timestamp=(1, 1700000000000))
    >>> h = dead_letter_headers(msg, ValueError("bad json"), group_id="billing")
    >>> [k for k, _ in h][:3], h.last_value(ERROR_TYPE)
    (['trace', 'kheaders.dlt.original.topic', 'kheaders.dlt.original.partition'], b'builtins.ValueError')
    """  # noqa: E501
    cause: BaseException = error
    field: str | None = None
    if isinstance(error, DeserializationError):
        field = error.field
        if error.__cause__ is not None:
            cause = error.__cause__
    out: list[tuple[str, bytes | None]] = _original_headers(message)
    add = out.append
    add(Header(ORIGINAL_TOPIC, (message.topic() or "").encode()))
    add(Header(ORIGINAL_PARTITION, str(message.partition()).encode()))
    add(Header(ORIGINAL_OFFSET, str(message.offset()).encode()))
    ts_type, ts = message.timestamp()
    if ts_type in _TIMESTAMP_TYPES:
        add(Header(ORIGINAL_TIMESTAMP, str(ts).encode()))
        add(Header(ORIGINAL_TIMESTAMP_TYPE, _TIMESTAMP_TYPES[ts_type].encode()))
    if group_id:
        add(Header(CONSUMER_GROUP, group_id.encode()))
    if field is not None:
        add(Header(ERROR_FIELD, field.encode()))
    kind = type(cause)
    add(Header(ERROR_TYPE, f"{kind.__module__}.{kind.__qualname__}".encode()))
    text = str(cause)[:MAX_ERROR_MESSAGE]
    add(Header(ERROR_MESSAGE, text.encode("utf-8", "backslashreplace")))
    return trusted(out, read_only=False)


class DeadLetterPublisher:
    """Republishes failed records to a dead-letter topic, raw bytes and original headers kept.

    The topic is ``topic`` when given, else the record's topic plus ``topic_suffix``
    (``orders`` → ``orders.dlt``). ``producer`` is a kheaders :class:`Producer` (its
    underlying confluent producer is used, so serializers and interceptors never touch the
    raw bytes) or a ``confluent_kafka.Producer``. Delivery happens on that producer's
    ``poll``/``flush``.
    """

    __slots__ = ("_produce", "group_id", "topic", "topic_suffix")

    def __init__(
        self,
        producer: Producer | confluent_kafka.Producer,
        topic: str | None = None,
        *,
        topic_suffix: str = ".dlt",
        group_id: str | None = None,
    ) -> None:
        if topic is None and not topic_suffix:
            raise ValueError("give a dead-letter topic or a non-empty topic_suffix")
        raw = producer.wrapped if isinstance(producer, Producer) else producer
        self._produce: Callable[..., None] = raw.produce
        self.topic = topic
        self.topic_suffix = topic_suffix
        self.group_id = group_id

    def topic_for(self, source_topic: str) -> str:
        """The dead-letter topic for records read from ``source_topic``."""
        return self.topic if self.topic is not None else source_topic + self.topic_suffix

    def publish(
        self,
        failure: DeserializationError | Message,
        error: BaseException | None = None,
        *,
        on_delivery: Callable[[KafkaError | None, Message], object] | None = None,
        headers: HeaderTypes = None,
        key: object = _CONSUMED,
        value: object = _CONSUMED,
    ) -> str:
        """Republish the failed record; return the dead-letter topic it was sent to.

        ``failure`` is a DeserializationError (its raw record and cause are used) or a
        Message together with the ``error`` that made processing fail. ``key`` and ``value``
        default to the bytes that were consumed (kept by the kheaders consumer that
        deserialized the record, else the record's own, which must then be bytes or None).
        ``headers`` (any shape ``produce`` takes) are added after the failure headers.
        Raises TypeError when a Message comes without its error, or with a key or value
        decoded outside a kheaders consumer and no consumed bytes given for it;
        InvalidNameError, before producing, when a header key cannot be sent intact (NUL,
        not UTF-8); DeserializationError when the Message's headers cannot be read; whatever
        the producer's ``produce`` raises (BufferError, KafkaException).
        """
        if isinstance(failure, DeserializationError):
            message: Message = failure.message
            error = failure if error is None else error
        else:
            message = failure
            if error is None:
                raise TypeError("publish(message, error): say why the record failed")
        kept = consumed_bytes(message)
        raw_key = _consumed(message, "key", key, kept)
        raw_value = _consumed(message, "value", value, kept)
        out = dead_letter_headers(message, error, group_id=self.group_id)
        if headers is not None:
            out.extend(Headers(headers).to_list())
        check_sendable(pairs_of(out), None)
        topic = self.topic_for(message.topic() or "")
        self._produce(
            topic,
            raw_value,
            raw_key,
            on_delivery=on_delivery,
            headers=out.to_list(),
        )
        _telemetry.dead_letter_published(topic)
        return topic


def _consumed(
    message: Message, field: str, given: object, kept: tuple[bytes | None, bytes | None]
) -> bytes | None:
    """The consumed bytes of the record's ``field``: ``given``, else those ``kept``.

    Raises TypeError for a decoded field without its consumed bytes (never re-serialized).
    """
    data = kept[field == "value"] if given is _CONSUMED else given
    if data is None or isinstance(data, bytes):
        return data
    where = f"{message.topic()}[{message.partition()}]@{message.offset()}"
    raise TypeError(
        f"the {field} of the record at {where} was decoded ({type(data).__name__}): pass the"
        f" bytes that were consumed as {field}= (dead letters are never re-serialized)"
    )
