"""Dead-letter publishing: a record that could not be processed goes, byte for byte, to its
dead-letter topic with headers that say where it came from and why it failed (the original
headers, in order, then the ``kheaders.dlt.*`` ones of :mod:`kheaders.deadletter._own`).

The record's key and value are republished as they were consumed, never re-serialized: a
DeserializationError carries them, and a record a kheaders consumer deserialized keeps them
(:func:`~kheaders._client.consumed.consumed_bytes`). ``key=`` / ``value=`` are for a record
that lost them: one decoded elsewhere, or whose headers were replaced with ``set_headers``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import confluent_kafka
from confluent_kafka import KafkaError, Message

from kheaders import _telemetry
from kheaders._client.consumed import consumed_bytes
from kheaders._client.producer import Producer
from kheaders._errors import DeserializationError
from kheaders._model.headers import Headers, HeaderTypes, pairs_of
from kheaders._model.limits import check_sendable
from kheaders._runner import deprecated_keyword
from kheaders.deadletter._config import DeadLetter, kheaders_dead_letter
from kheaders.deadletter._topics import ensure_topics
from kheaders.deadletter._write import dead_letter_headers

_CONSUMED = object()
"""``publish``'s default for ``key``/``value``: the record's own, which must be bytes."""
_UNSET = object()


class DeadLetterPublisher:
    """Republishes failed records to their dead-letter topic, raw bytes and headers kept.

    ``dead_letter`` is a :class:`DeadLetter`, a topic name (``{topic}`` in it stands for the
    record's topic) or None for the default ``<topic>-dlt`` (``orders`` -> ``orders-dlt``).
    ``producer`` is a kheaders :class:`Producer` (its underlying confluent producer is used,
    so serializers and interceptors never touch the raw bytes) or a
    ``confluent_kafka.Producer``. Delivery happens on that producer's ``poll``/``flush``.
    Call :meth:`prepare` at start to have the dead-letter topics exist (created, or refused).

    ``topic=`` and ``topic_suffix=`` are the deprecated names of ``dead_letter=`` (a
    DeprecationWarning). Raises ConfigurationError for a bad ``dead_letter`` (or one with
    Spring's contract: the processor writes that one).
    """

    __slots__ = ("_produce", "dead_letter", "group_id")

    def __init__(
        self,
        producer: Producer | confluent_kafka.Producer,
        dead_letter: DeadLetter | str | None = None,
        *,
        group_id: str | None = None,
        topic: object = _UNSET,
        topic_suffix: object = _UNSET,
    ) -> None:
        if topic is not _UNSET or topic_suffix is not _UNSET:
            old = "topic" if topic is not _UNSET else "topic_suffix"
            deprecated_keyword("DeadLetterPublisher", old, "write dead_letter=")
            if topic not in (_UNSET, None):
                dead_letter = topic  # type: ignore[assignment]
            elif topic_suffix is not _UNSET:
                dead_letter = DeadLetter(suffix=topic_suffix)  # type: ignore[arg-type]
        self.dead_letter = kheaders_dead_letter(dead_letter, "DeadLetterPublisher")
        raw = producer.wrapped if isinstance(producer, Producer) else producer
        self._produce: Callable[..., None] = raw.produce
        self.group_id = group_id

    def topic_for(self, source_topic: str) -> str:
        """The dead-letter topic for records read from ``source_topic``."""
        return self.dead_letter.topic_for(source_topic)

    def prepare(
        self, config: Mapping[str, object], source_topics: Sequence[str], timeout: float = 15.0
    ) -> None:
        """Make sure the dead-letter topics of ``source_topics`` exist on the cluster
        ``config`` reaches: each missing one is created with its source topic's partition
        count. Raises ConfigurationError naming a dead-letter topic that is missing and
        cannot be created (no permission, a broker refusing), BrokerUnavailableError."""
        ensure_topics(config, {t: [self.topic_for(t)] for t in source_topics}, timeout=timeout)

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
        self._produce(topic, raw_value, raw_key, on_delivery=on_delivery, headers=out.to_list())
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
