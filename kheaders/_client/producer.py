"""A header-aware producer around ``confluent_kafka.Producer``, with interceptors and serializers.

Per record, in Kafka's order: interceptors' ``on_send`` → key, then value serializer (they
see the live, writable headers) → header limits and ``headers.close()`` → librdkafka
``produce``. Every interceptor's ``on_acknowledgement`` runs exactly once per record: on
delivery, on delivery failure, or when ``produce`` itself raised (the exception is then
re-raised to the caller).

The producer is the face; its records go through its one
:class:`~kheaders._client.sending.Sender` (what each record goes through, chosen when the
producer is built) and their delivery reports through the sender's
:class:`~kheaders._client.reports.Reporter`. kheaders.aio reaches both through
:func:`sender_of`, the producer's one internal interface.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from operator import index
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException

from kheaders._client.chain import InterceptorChain
from kheaders._client.clientlog import LibrdkafkaLog, client_log, route_client_log
from kheaders._client.config import resolve
from kheaders._client.records import ProducerRecord
from kheaders._client.reports import DeliveryCallback, JavaReport, SendCallback
from kheaders._client.sending import Handed, RawProduce, Sender, handing, instrumented
from kheaders._client.wrapping import ClientWrapper, client_config, refuse_async
from kheaders._errors import KHeadersError
from kheaders._log import get_logger
from kheaders._model.headers import HeaderTypes
from kheaders._model.limits import DEFAULT_LIMITS, HeaderLimits

_log = get_logger("kheaders.producer")


class Producer(ClientWrapper, client=confluent_kafka.Producer):
    """A ``confluent_kafka.Producer`` whose records carry :class:`Headers` through interceptors.

    Built as confluent's is: ``Producer(config)``, ``Producer(**config)`` or both (keywords
    win), ``logger=`` included. ``config`` is librdkafka's config plus kheaders' keys
    (``interceptor.classes``, ``key.serializer``, ``value.serializer``, ``kheaders.*``),
    which are removed before librdkafka sees it. Every record's headers are checked against
    ``limits`` (a :class:`HeaderLimits`; default from the ``kheaders.header.limits.*``
    settings, else the defaults; ``False`` turns the check off) before librdkafka sees the
    record (HeaderLimitError). A config-level ``on_delivery`` callback becomes the default
    per-record callback (and so also sees ``msg.headers()`` as the record's Headers).

    Raises TypeError('expected configuration dict') without a config (as confluent-kafka),
    ConfigurationError for a bad kheaders setting (naming the setting and class), TypeError
    for an object that implements no producer hook, and confluent-kafka's KafkaException for
    a setting librdkafka rejects.
    """

    _closed_message = "Producer has been closed"
    _client_class: type[confluent_kafka.Producer] | None = None
    """The confluent-kafka class built from the config: ``confluent_kafka.Producer`` as found
    when the producer is built (so OpenTelemetry's ``instrument()`` applies), or a subclass
    whose ``produce`` takes confluent's positional arguments (kheaders.aio's)."""
    __slots__ = ("_chain", "_closed", "_default_cb", "_producer", "_producer_log", "_sender")

    def __init__(
        self,
        config: Mapping[str, object] | None = None,
        /,
        *,
        interceptors: Iterable[object] = (),
        key_serializer: object = None,
        value_serializer: object = None,
        strict: bool = False,
        limits: HeaderLimits | bool | None = None,
        logger: object = None,
        **kwargs: object,
    ) -> None:
        config = client_config(config, kwargs, logger)
        header_limits = _limits(limits, config)
        setup = resolve(
            config,
            interceptors=interceptors,
            key=key_serializer,
            value=value_serializer,
            producer=True,
            strict=strict,
        )
        rdkafka = route_client_log(setup.rdkafka)
        default_cb = rdkafka.pop("on_delivery", None)
        chain = setup.chain
        try:
            raw = (self._client_class or confluent_kafka.Producer)(rdkafka)
        except BaseException:
            chain.close()
            raise
        self._setup(raw, chain, (setup.key, setup.value), default_cb, header_limits)  # type: ignore[arg-type]
        self._producer_log = client_log(rdkafka)

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
        self._setup(raw, chain, (key_ser, value_ser), None, limits)
        return self

    _producer: confluent_kafka.Producer
    _producer_log: LibrdkafkaLog | None
    """Where librdkafka's lines go (:mod:`kheaders._client.clientlog`): flushed at close."""
    _sender: Sender
    """What every record goes through, chosen once (see :mod:`kheaders._client.sending`)."""

    def _setup(
        self,
        raw: confluent_kafka.Producer,
        chain: InterceptorChain,
        serializers: tuple[Callable[..., object] | None, Callable[..., object] | None],
        default_cb: DeliveryCallback | None,
        limits: HeaderLimits | None,
    ) -> None:
        self._producer = raw
        self._chain = chain
        self._producer_log = None
        self._default_cb = default_cb
        self._closed = False
        hand, parked = self._handing(raw, handing(raw, type(raw) is type(self)._client_class))
        self._sender = Sender(
            chain,
            limits,
            hand,
            serializers=serializers,
            parked=parked,
            beneath=raw if instrumented(raw) else None,
        )

    def _handing(
        self, raw: confluent_kafka.Producer, produce: RawProduce
    ) -> tuple[RawProduce, deque[Handed] | None]:
        """What records are handed to, and where one a full queue refused waits (``None``:
        BufferError is raised, as confluent does); a subclass's to change."""
        return produce, None

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
        encodable as UTF-8 (before librdkafka sees it), TypeError/ValueError for a bad value,
        HeaderLimitError,
        SerializationError when a serializer fails, TypeError for a key or value librdkafka
        cannot send (naming the topic and type), and whatever librdkafka raises (BufferError
        when the queue is full, KafkaException).
        """
        sender = self._sender
        cb = callback or on_delivery or self._default_cb  # no report when nothing waits:
        report = None if cb is None and sender.ack is None else sender.reporter.report(cb, headers)
        sender.send(topic, value, key, headers, report, partition=partition, timestamp=timestamp)

    def send(self, record: ProducerRecord, on_delivery: SendCallback | None = None) -> None:
        """Send a :class:`ProducerRecord`; ``on_delivery(metadata, error)`` as in Java.

        When sending fails before librdkafka accepted the record, the exception is raised here
        (``on_delivery`` is not called; interceptors' ``on_acknowledgement`` is).
        Raises as :meth:`produce`.
        """
        sender = self._sender
        reporter = sender.reporter
        report = (
            reporter.report(None, record.headers)
            if on_delivery is None
            else JavaReport(reporter, on_delivery)  # type: ignore[arg-type]
        )
        sender.send_record(record, report)

    def produce_batch(
        self,
        topic: str,
        messages: list[dict[str, Any]],
        partition: int = -1,
        callback: DeliveryCallback | None = None,
        on_delivery: DeliveryCallback | None = None,
    ) -> int:
        """confluent-kafka's ``produce_batch``, headers included; return how many were queued.

        Each message dict may hold ``value``, ``key``, ``partition``, ``headers`` and
        ``callback``. The batch is checked whole first, as confluent-kafka checks it; then
        every message goes through :meth:`produce` (headers, interceptors, serializers,
        limits: confluent's own ``produce_batch`` drops headers). One that fails gets the
        error in its ``"_error"`` entry, as confluent-kafka does: librdkafka's ``KafkaError``
        (``_QUEUE_FULL`` for a full queue), or the exception kheaders raised (its header
        errors).

        Raises, before queueing any message, as confluent-kafka 2.16 does: TypeError when
        ``topic`` is not a ``str``, ``partition`` not an int or ``messages`` not a list, or
        naming the index of a message that is not a dict, or whose value or key (without a
        serializer for it) is not ``bytes``/``str``, or whose partition is not an int;
        NotImplementedError for a message with a timestamp. RuntimeError once closed.
        """
        if not isinstance(topic, str):
            raise TypeError(f"argument 1 must be str, not {type(topic).__name__}")
        partition = index(partition)
        sender = self._sender
        _check_batch(messages, sender.key_ser is None, sender.value_ser is None)
        default_cb = callback or on_delivery
        good = 0
        for m in messages:
            part = m.get("partition")
            try:
                self.produce(
                    topic,
                    m.get("value"),
                    m.get("key"),
                    partition if part is None else part,
                    m.get("callback") or default_cb,
                    None,
                    0,
                    m.get("headers"),
                )
            except BufferError:
                m["_error"] = KafkaError(KafkaError._QUEUE_FULL)
                continue
            except KafkaException as exc:
                m["_error"] = exc.args[0] if exc.args else exc
                continue
            except RuntimeError as exc:
                if not isinstance(exc, KHeadersError):  # closed: the batch stops, as confluent's
                    raise
                m["_error"] = exc
                continue
            except Exception as exc:
                m["_error"] = exc
                continue
            good += 1
        return good

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
        """Records (and librdkafka's events) not yet served; 0 for a producer never set up."""
        try:
            producer = self._producer
        except RuntimeError:  # a subclass that never called __init__ (see ClientWrapper)
            return 0
        return len(producer)

    def close(self, timeout: float | None = None) -> bool:
        """Flush, close the producer (a wrapped one too), then the interceptors; True when
        every record was delivered or failed before the producer closed (as confluent-kafka).

        ``timeout=None`` (confluent-kafka's ``close()``) waits until every record is delivered
        or failed, which ``message.timeout.ms`` bounds. With a ``timeout`` in seconds, records
        still queued then are purged (each gets its failure report, interceptors included),
        logged, and ``close`` returns False. Closing twice returns True.
        """
        if self._closed:
            return True
        self._closed = True
        try:
            remaining: int = self._producer.flush(-1 if timeout is None else timeout)
            if remaining:
                _log.warning("records not delivered before close; purged", count=remaining)
                self._producer.purge()
                self._producer.poll(0)
            close = getattr(self._producer, "close", None)  # confluent-kafka >= 2.13
            if close is not None:
                close()
        finally:
            if self._producer_log is not None:
                self._producer_log.flush()
            self._chain.close()
        return not remaining

    def __repr__(self) -> str:
        try:
            n = len(self._chain.interceptors)
        except RuntimeError:  # a subclass that never called __init__ (see ClientWrapper)
            return "<kheaders.Producer, never set up>"
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


def _check_batch(messages: object, check_keys: bool, check_values: bool) -> None:
    """confluent-kafka's checks of a ``produce_batch`` argument, its errors word for word.

    Raises TypeError or NotImplementedError (see :meth:`Producer.produce_batch`).
    """
    if not isinstance(messages, list):
        raise TypeError("messages must be a list")
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise TypeError(f"Message at index {i} must be a dict")
        value = m.get("value")
        if check_values and value is not None and not isinstance(value, bytes | str):
            raise TypeError(f"Message value at index {i} must be bytes or str")
        key = m.get("key")
        if check_keys and key is not None and not isinstance(key, bytes | str):
            raise TypeError(f"Message key at index {i} must be bytes or str")
        part = m.get("partition")
        if part is not None and not isinstance(part, int):
            raise TypeError(f"Message partition at index {i} must be int")
        if m.get("timestamp") is not None:
            raise NotImplementedError(
                "Message timestamps are not currently supported in batch mode"
            )


def sender_of(producer: Producer) -> Sender:
    """What ``producer``'s records go through (kheaders.aio's interface): its ``send`` and
    ``send_record`` take a report of the caller's making (a future, a
    :class:`~kheaders._client.reports.Carrier`); its ``reporter`` is what each report runs
    first."""
    return producer._sender


def producer_log(producer: Producer) -> LibrdkafkaLog | None:
    """Where ``producer``'s librdkafka lines go (``None``: a logger of the caller's, or a
    wrapped client kheaders did not build)."""
    return producer._producer_log


def wrap_producer(
    producer: confluent_kafka.Producer,
    *,
    interceptors: Iterable[object] = (),
    key_serializer: object = None,
    value_serializer: object = None,
    strict: bool = False,
    limits: HeaderLimits | None = DEFAULT_LIMITS,
    config: Mapping[str, object] | None = None,
) -> Producer:
    """Wrap an existing ``confluent_kafka.Producer`` (or a subclass, e.g. confluent's
    ``SerializingProducer``) in a kheaders Producer, which then owns it: ``close()`` and
    ``with`` close it too.

    ``config`` is for what the wrapped producer cannot tell: the settings it was built with
    that interceptors read (``client.id``, ``bootstrap.servers`` for tracing and metrics
    attributes) and kheaders' own keys (``interceptor.classes``, ``value.serializer``,
    ``kheaders.*``), resolved exactly as :class:`Producer` resolves its config; librdkafka
    never sees it.

    >>> import confluent_kafka
    >>> p = wrap_producer(confluent_kafka.Producer({"bootstrap.servers": "127.0.0.1:9"}))
    >>> p.close(timeout=0)
    True

    Raises TypeError for an asyncio client (use ``kheaders.aio``) or an interceptor that
    implements no producer hook, ConfigurationError for a bad setting or a serializer
    without ``serialize``.
    """
    refuse_async(producer, "wrap_producer")
    setup = resolve(
        config or {},
        interceptors=interceptors,
        key=key_serializer,
        value=value_serializer,
        producer=True,
        strict=strict,
    )
    chain = setup.chain
    return Producer._wrap(producer, chain, setup.key, setup.value, limits)
