"""A header-aware producer around ``confluent_kafka.Producer``, with interceptors and serializers.

Per record, in Kafka's order: interceptors' ``on_send`` → key, then value serializer (they
see the live, writable headers) → ``headers.close()`` → librdkafka ``produce``. Every
interceptor's ``on_acknowledgement`` runs exactly once per record: on delivery, on delivery
failure, or when ``produce`` itself raised (the exception is then re-raised to the caller).

The producer picks its ``produce`` implementation at construction: without interceptors and
serializers it is a thin check-and-forward (header keys must be ``str``) costing a few percent
of librdkafka's own enqueue time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import confluent_kafka

from kheaders._client.chain import PRODUCER_HOOKS, InterceptorChain
from kheaders._client.config import _close_quietly, resolve
from kheaders._client.delivery import DeliveryCallback, SendCallback, delivery_report
from kheaders._client.lean import EMPTY, READ_ONLY_AT_SEND, lean_produce, writable
from kheaders._client.records import ProducerRecord, RecordMetadata
from kheaders._client.wrapping import ClientWrapper
from kheaders._errors import ReadOnlyHeadersError, SerializationError
from kheaders._log import get_logger
from kheaders._model.headers import Headers, HeaderTypes
from kheaders._model.limits import DEFAULT_LIMITS, HeaderLimits, check_sendable

if TYPE_CHECKING:
    pass

_log = get_logger("kheaders.producer")


class Producer(ClientWrapper):
    """A ``confluent_kafka.Producer`` whose records carry :class:`Headers` through interceptors.

    ``config`` is librdkafka's config plus kheaders' keys (``interceptor.classes``,
    ``key.serializer``, ``value.serializer``), which are removed before librdkafka sees it.
    Every record's headers are checked against ``limits`` (a :class:`HeaderLimits`; default
    from the ``kheaders.header.limits.*`` settings, else the defaults; ``False`` turns the
    check off) before librdkafka sees the record (HeaderLimitError).
    A config-level ``on_delivery`` callback becomes the default per-record callback (and so
    also sees ``msg.headers()`` as the record's Headers).

    Raises ConfigurationError for a bad kheaders setting (naming the setting and class),
    TypeError for an object that implements no producer hook, and confluent-kafka's
    KafkaException for a setting librdkafka rejects.
    """

    _client_attr = "_producer"
    _client_class: type[confluent_kafka.Producer] = confluent_kafka.Producer
    """The confluent-kafka class built from the config (kheaders.aio uses a subclass)."""
    __slots__ = (
        "__dict__",  # holds only the lean ``produce`` when no feature needs the full one
        "_ack",
        "_chain",
        "_closed",
        "_default_cb",
        "_key_ser",
        "_limits",
        "_owned",
        "_producer",
        "_raw_produce",
        "_value_ser",
    )

    def __init__(
        self,
        config: Mapping[str, object],
        *,
        interceptors: Iterable[object] = (),
        key_serializer: object = None,
        value_serializer: object = None,
        strict: bool = False,
        limits: HeaderLimits | bool | None = None,
    ) -> None:
        header_limits = _limits(limits, config)
        setup = resolve(
            config,
            interceptors=interceptors,
            key=key_serializer,
            value=value_serializer,
            producer=True,
        )
        default_cb = setup.rdkafka.pop("on_delivery", None)
        chain = _chain(setup.interceptors, strict)
        try:
            raw = self._client_class(setup.rdkafka)
        except BaseException:
            chain.close()
            raise
        self._setup(
            raw,
            chain,
            setup.key,
            setup.value,
            default_cb,  # type: ignore[arg-type]
            owned=True,
            limits=header_limits,
        )

    @classmethod
    def _wrap(
        cls,
        raw: confluent_kafka.Producer,
        chain: InterceptorChain,
        key_ser: Callable[..., object] | None,
        value_ser: Callable[..., object] | None,
        limits: HeaderLimits | None = DEFAULT_LIMITS,
    ) -> Producer:
        self = cls.__new__(cls)
        self._setup(raw, chain, key_ser, value_ser, None, owned=False, limits=limits)
        return self

    _producer: confluent_kafka.Producer
    _raw_produce: Callable[..., None]
    _limits: HeaderLimits | None

    def _setup(
        self,
        raw: confluent_kafka.Producer,
        chain: InterceptorChain,
        key_ser: Callable[..., object] | None,
        value_ser: Callable[..., object] | None,
        default_cb: DeliveryCallback | None,
        *,
        owned: bool,
        limits: HeaderLimits | None = DEFAULT_LIMITS,
    ) -> None:
        self._producer = raw
        self._limits = limits
        self._raw_produce = raw.produce
        self._chain = chain
        # bound once: a bound method made per record would be one more object in flight
        self._ack = chain.acknowledge if chain.on_acknowledgement else None
        self._key_ser = key_ser
        self._value_ser = value_ser
        self._default_cb = default_cb
        self._owned = owned
        self._closed = False
        self.__dict__.pop("produce", None)
        lean = not (chain.on_send or chain.on_acknowledgement or key_ser or value_ser or default_cb)
        if lean and type(self).produce is Producer.produce:  # not overridden by a subclass
            lean_fn = lean_produce(raw.produce, limits)
            lean_fn.__doc__ = Producer.produce.__doc__
            self.produce = lean_fn  # type: ignore[method-assign]

    # -- produce ----------------------------------------------------------------------------

    def produce(  # noqa: PLR0917 - confluent-kafka's positional signature
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        callback: DeliveryCallback | None = None,
        on_delivery: DeliveryCallback | None = None,
        timestamp: int = 0,
        headers: HeaderTypes = None,
    ) -> None:
        """Send one record (confluent-kafka's signature and positional order).

        ``headers`` may be a :class:`Headers` (used as the record's headers, then closed), a
        list of ``(str, value)`` tuples, a mapping, or ``None``. ``on_delivery(err, msg)``
        (alias ``callback``) is served from :meth:`poll`/:meth:`flush`, with ``msg.headers()``
        returning the record's read-only Headers.

        Raises ReadOnlyHeadersError for headers that are already closed, TypeError for a header
        key that is not ``str``, InvalidNameError for one that is empty, holds NUL or is not
        encodable as UTF-8 (before librdkafka sees it), SerializationError when a serializer
        fails, HeaderLimitError over a header limit, and
        whatever librdkafka raises (BufferError when the queue is full, KafkaException).
        """
        record = ProducerRecord(
            topic,
            value,
            key,
            writable(headers),
            None if partition < 0 else partition,
            timestamp or None,
        )
        self._send(record, callback or on_delivery or self._default_cb, None)

    def send(self, record: ProducerRecord, on_delivery: SendCallback | None = None) -> None:
        """Send a :class:`ProducerRecord`; ``on_delivery(metadata, error)`` as in Java.

        When sending fails before librdkafka accepted the record, the exception is raised here
        (``on_delivery`` is not called; interceptors' ``on_acknowledgement`` is).
        Raises as :meth:`produce`.
        """
        if record.headers._read_only:
            raise ReadOnlyHeadersError(READ_ONLY_AT_SEND)
        self._send(record, None, on_delivery)

    def _send(
        self,
        record: ProducerRecord,
        cb: DeliveryCallback | None,
        java_cb: SendCallback | None,
    ) -> None:
        chain = self._chain
        topic = record.topic
        headers = record.headers
        try:
            if chain.on_send:  # raises only in strict mode
                record = chain.send(record)
                topic = record.topic
                headers = record.headers
            if type(headers) is not Headers:
                headers = record.headers = Headers(headers)
            key = record.key
            value = record.value
            if self._key_ser is not None:
                key = self._serialize(self._key_ser, "key", topic, headers, key)
            if self._value_ser is not None:
                value = self._serialize(self._value_ser, "value", topic, headers, value)
            check_sendable(headers._items, self._limits)
            headers.close()
            report = None
            ack = self._ack
            if cb is not None or java_cb is not None or ack is not None:
                report = delivery_report(headers, ack, cb, java_cb)
            partition = record.partition
            self._raw_produce(
                topic,
                value,
                key,
                -1 if partition is None else partition,
                report,
                None,
                record.timestamp or 0,
                headers._items or None,
            )
        except Exception as exc:
            if chain.on_acknowledgement:
                part = -1 if record.partition is None else record.partition
                chain.acknowledge(RecordMetadata(topic, part), exc, _readable(headers))
            raise

    @staticmethod
    def _serialize(
        fn: Callable[..., object], field: str, topic: str, headers: Headers, data: object
    ) -> object:
        try:
            return fn(topic, headers, data)
        except Exception as exc:
            raise SerializationError(
                f"{field} serializer failed for a record to topic {topic!r}:"
                f" {type(exc).__name__}: {exc}",
                topic=topic,
                field=field,
            ) from exc

    # -- the rest of the producer -----------------------------------------------------------

    @property
    def interceptors(self) -> InterceptorChain:
        """The interceptor chain (``.errors`` counts failures per interceptor)."""
        return self._chain

    @property
    def wrapped(self) -> confluent_kafka.Producer:
        """The underlying ``confluent_kafka.Producer``."""
        return self._producer

    def poll(self, timeout: float = -1) -> int:
        """Serve delivery reports (callbacks); return how many were served."""
        return self._producer.poll(timeout)

    def flush(self, timeout: float = -1) -> int:
        """Wait until all records are delivered or failed; return how many are still queued."""
        return self._producer.flush(timeout)

    def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None:
        """Drop queued records; their delivery reports (with an error) come on the next poll."""
        self._producer.purge(in_queue=in_queue, in_flight=in_flight, blocking=blocking)

    def __len__(self) -> int:
        return len(self._producer)

    def close(self, timeout: float | None = None) -> int:
        """Flush (up to ``timeout`` seconds; ``None``: until every record is delivered or
        failed, bounded by ``message.timeout.ms``), then close the interceptors.

        A producer kheaders built is then closed; records still queued after ``timeout`` are
        purged (their interceptors see the failure) and counted in the return value and a log
        warning. A wrapped producer is flushed only, never closed or purged.
        Closing twice is a no-op returning 0.
        """
        if self._closed:
            return 0
        self._closed = True
        try:
            remaining: int = self._producer.flush(-1 if timeout is None else timeout)
            if remaining and self._owned:
                _log.warning("records not delivered before close; purged", count=remaining)
                self._producer.purge()
                self._producer.poll(0)
            close = getattr(self._producer, "close", None)  # newer confluent-kafka only
            if self._owned and close is not None:
                close()
        finally:
            self._chain.close()
        return remaining

    def __repr__(self) -> str:
        n = len(self._chain.interceptors)
        return f"<kheaders.Producer wrapping {self._producer!r}, {n} interceptors>"


def _limits(
    limits: HeaderLimits | bool | None, config: Mapping[str, object]
) -> HeaderLimits | None:
    """The producer's header limits: given, from ``kheaders.header.limits.*``, or defaults."""
    if limits is None or limits is True:
        return HeaderLimits.from_config(config)
    if limits is False:
        return None
    return limits


def _readable(headers: object) -> Headers:
    return headers if type(headers) is Headers else EMPTY


def _chain(interceptors: list[object], strict: bool) -> InterceptorChain:
    try:
        return InterceptorChain(interceptors, strict=strict, hooks=PRODUCER_HOOKS)
    except BaseException:
        _close_quietly(interceptors)
        raise


def wrap_producer(
    producer: confluent_kafka.Producer,
    *,
    interceptors: Iterable[object] = (),
    key_serializer: object = None,
    value_serializer: object = None,
    strict: bool = False,
    limits: HeaderLimits | None = DEFAULT_LIMITS,
) -> Producer:
    """Wrap an existing ``confluent_kafka.Producer`` (left as it is) in a kheaders Producer.

    >>> import confluent_kafka
    >>> p = wrap_producer(confluent_kafka.Producer({"bootstrap.servers": "127.0.0.1:9"}))
    >>> p.close(timeout=0)
    0

    Raises TypeError for an interceptor that implements no producer hook, ConfigurationError
    for a serializer without ``serialize``.
    """
    setup = resolve(
        {},
        interceptors=interceptors,
        key=key_serializer,
        value=value_serializer,
        producer=True,
    )
    chain = _chain(setup.interceptors, strict)
    return Producer._wrap(producer, chain, setup.key, setup.value, limits)
