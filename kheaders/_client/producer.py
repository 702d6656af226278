"""A header-aware producer around ``confluent_kafka.Producer``, with interceptors and serializers.

Per record, in Kafka's order: interceptors' ``on_send`` → key, then value serializer (they
see the live, writable headers) → header limits and ``headers.close()`` → librdkafka
``produce``. Every interceptor's ``on_acknowledgement`` runs exactly once per record: on
delivery, on delivery failure, or when ``produce`` itself raised (the exception is then
re-raised to the caller).

There is one ``produce``. A record that no interceptor or serializer needs to see skips
building a :class:`ProducerRecord`: its headers are checked (the same rules, see
:mod:`kheaders._client.outgoing`) and handed to librdkafka. A header list holding the very
pair objects of the last one that passed the checks is not checked again (an identity
comparison per pair), so the usual "same headers on every record" costs next to nothing.
A delivery callback keeps such a record on that path: its report is one small object
carrying a snapshot of the headers (:mod:`kheaders._client.delivery`), and none at all
for a record without headers.

A producer whose interceptors only acknowledge (``on_acknowledgement``, no ``on_send``, no
serializers) takes the same path: its report is one small object over the same snapshot,
and the read-only Headers and RecordMetadata ``on_acknowledgement`` sees are built when the
report comes. A record refused on the way (bad headers, a full queue) is acknowledged with
the error, the headers as given, and the producer's own measure of the time it took as the
metadata's ``latency`` (librdkafka measures the rest).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from operator import index, is_
from time import perf_counter
from types import MethodType
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException

from kheaders._client.beneath import instrumented, leave_to_instrumentation, passed
from kheaders._client.chain import InterceptorChain
from kheaders._client.config import resolve
from kheaders._client.delivery import (
    Acknowledged,
    Carrier,
    DeliveryCallback,
    Kept,
    Reports,
    SendCallback,
    acknowledging,
    delivering,
    read_only,
)
from kheaders._client.outgoing import EMPTY, closed, plain_list, writable
from kheaders._client.rawcall import RawProduce, raw_produce, unsendable
from kheaders._client.records import ProducerRecord, RecordMetadata
from kheaders._client.wrapping import ClientWrapper, client_config, refuse_async
from kheaders._errors import KHeadersError, ReadOnlyHeadersError, SerializationError
from kheaders._log import get_logger
from kheaders._model.headers import READ_ONLY_MESSAGE, Headers, HeaderTypes, plain_pairs
from kheaders._model.limits import DEFAULT_LIMITS, HeaderLimits

_log = get_logger("kheaders.producer")

_NOTHING_CHECKED: tuple[Any, ...] = (object(),)
"""Holds no header pair: the memo of the last header list that passed the checks, at first."""


def _vouched(headers: object, fits: tuple[Any, ...]) -> bool:
    """True when ``headers`` holds the very pair objects of ``fits`` (those of the last list
    that passed the checks), so it needs no checking again.

    Identity, not equality: a tuple is immutable, so the same tuple objects mean the same
    exact ``str`` keys and ``bytes`` values that were checked, while an equal pair may hold
    a ``str`` subclass key (librdkafka would send ``str()`` of it, which can be other text,
    or crash on a lone surrogate) or a ``bytearray`` value. Costs about 0.2 µs for three
    headers against 0.03 µs for ``==``; correctness decides.
    """
    return type(headers) is list and len(headers) == len(fits) and all(map(is_, headers, fits))


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
    __slots__ = (
        "_ack",
        "_acking",
        "_acks",
        "_beneath",
        "_carry",
        "_chain",
        "_closed",
        "_default_cb",
        "_fits",
        "_key_ser",
        "_lean",
        "_limits",
        "_park",
        "_producer",
        "_raw_produce",
        "_reports",
        "_value_ser",
    )

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
        default_cb = setup.rdkafka.pop("on_delivery", None)
        chain = setup.chain
        try:
            raw = (self._client_class or confluent_kafka.Producer)(setup.rdkafka)
        except BaseException:
            chain.close()
            raise
        self._setup(raw, chain, setup.key, setup.value, default_cb, header_limits)  # type: ignore[arg-type]

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
        self._setup(raw, chain, key_ser, value_ser, None, limits)
        return self

    _producer: confluent_kafka.Producer
    _raw_produce: RawProduce
    _carry: RawProduce
    """What :meth:`_produce_carried` hands a lean record to: ``_raw_produce``, or for
    kheaders.aio confluent's C ``produce`` itself (its caller keeps the order of parked records)."""
    _park: RawProduce | None
    """Where :meth:`_produce_carried` puts a record librdkafka's full queue refused (its 8
    arguments, as for ``_raw_produce``); ``None``: BufferError is raised, as confluent does."""
    _limits: HeaderLimits | None
    _fits: tuple[Any, ...]
    """The pairs of the last header list that passed the checks, as a tuple: the memo
    :func:`_vouched` compares with. A list that just passed (vouched for, or memoized) holds
    these very pairs, so the memo is also the snapshot its report keeps: none is made."""

    def _setup(  # noqa: PLR0917 - the producer's parts, set once
        self,
        raw: confluent_kafka.Producer,
        chain: InterceptorChain,
        key_ser: Callable[..., object] | None,
        value_ser: Callable[..., object] | None,
        default_cb: DeliveryCallback | None,
        limits: HeaderLimits | None,
    ) -> None:
        self._producer = raw
        self._limits = limits
        self._raw_produce = raw_produce(raw, type(raw) is type(self)._client_class)
        self._carry = self._raw_produce
        self._park = None
        self._chain = chain
        self._beneath = raw if instrumented(raw) else None
        # bound once: a bound method made per record would be one more object in flight
        self._ack = chain.acknowledge if chain.on_acknowledgement else None
        self._key_ser = key_ser
        self._value_ser = value_ser
        self._default_cb = default_cb
        self._closed = False
        self._fits = _NOTHING_CHECKED
        self._reports = Reports(delivering)
        self._lean = not (chain.on_send or self._ack or key_ser or value_ser)
        self._acking = self._ack is not None and not (chain.on_send or key_ser or value_ser)
        self._acks = Reports(partial(acknowledging, self._ack))  # type: ignore[arg-type]  # _acking

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
        if self._lean:
            # nobody sees this record before librdkafka: only its headers are checked
            sent: Any = headers
            if headers is not None and not _vouched(headers, self._fits):
                if type(headers) is list and plain_list(headers, self._limits):
                    self._fits = tuple(headers)  # the next record with these pairs: no check
                    sent = headers or None
                else:
                    sent = self._checked(headers)
            cb = callback or on_delivery or self._default_cb
            report = None if cb is None else self._delivered(cb, sent)
            try:
                return self._raw_produce(
                    topic, value, key, partition, report, None, timestamp, sent
                )
            except TypeError as exc:
                if sent is headers and type(headers) is list and headers:
                    return self._memo_refused(topic, value, key, partition, timestamp, headers, cb)
                raise unsendable(topic, key, value, exc) from exc
        if self._acking:
            return self._produce_acked(
                topic, value, key, partition, callback or on_delivery or self._default_cb,
                timestamp, headers,
            )  # fmt: skip
        return self._produce_record(
            topic, value, key, partition, callback or on_delivery or self._default_cb,
            timestamp, headers,
        )  # fmt: skip

    def _produce_record(  # noqa: PLR0917 - produce()'s arguments
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        cb: DeliveryCallback | None,
        timestamp: int,
        headers: HeaderTypes,
        carrier: Carrier | None = None,
    ) -> None:
        """:meth:`produce` through interceptors' ``on_send`` and the serializers.

        Raises as :meth:`produce`.
        """
        record = ProducerRecord(
            topic,
            value,
            key,
            writable(headers),
            None if partition < 0 else partition,
            timestamp or None,
        )
        self._send(record, cb, None, carrier)

    def _produce_acked(  # noqa: PLR0917 - produce()'s arguments
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        cb: DeliveryCallback | None,
        timestamp: int,
        headers: HeaderTypes,
        carrier: Carrier | None = None,
    ) -> None:
        """:meth:`produce` for a producer whose interceptors only acknowledge: the lean
        path's checks, and a report from :func:`~kheaders._client.delivery.acknowledging`
        over the headers' snapshot (no ProducerRecord, Headers or RecordMetadata until the
        report). Headers the checks refuse take :meth:`_produce_record`, which checks them
        again and acknowledges the refusal as it always has.

        With a ``carrier`` (kheaders.aio, for ``cb``), the carrier is the report and must
        run the acknowledgements itself (see :meth:`_produce_carried`); one librdkafka's
        full queue refuses is parked when the producer parks (``_park``), not acknowledged.

        Raises as :meth:`produce`.
        """
        start = perf_counter()
        sent: Any = headers
        if headers is not None and not _vouched(headers, self._fits):
            try:
                if type(headers) is list and plain_list(headers, self._limits):
                    self._fits = tuple(headers)  # as in produce()
                    sent = headers or None
                else:
                    sent = self._checked(headers)
            except Exception:
                return self._produce_record(
                    topic, value, key, partition, cb, timestamp, headers, carrier
                )
        kept: Callable[..., object]
        produce = self._raw_produce
        if carrier is not None:
            # a list that passed: the memo is its snapshot (see _fits)
            carrier.sent = self._fits if type(sent) is list else _kept(sent)
            kept = carrier
            produce = self._carry
        else:
            report_of = self._acks.of(cb)
            if sent is None:
                kept = report_of
            else:  # as above
                kept = MethodType(report_of, self._fits if type(sent) is list else _kept(sent))
        try:
            return produce(topic, value, key, partition, kept, None, timestamp, sent)
        except TypeError as exc:
            if sent is headers and type(headers) is list and headers:
                # librdkafka refused a list that passed the plain checks: the full checks name why
                self._fits = _NOTHING_CHECKED
                return self._produce_record(
                    topic, value, key, partition, cb, timestamp, headers, carrier
                )
            error = unsendable(topic, key, value, exc)
            self._refused(topic, partition, error, sent, start)
            raise error from exc
        except BufferError as exc:
            if carrier is not None and self._park is not None:
                return self._park(topic, value, key, partition, kept, None, timestamp, sent)
            self._refused(topic, partition, exc, sent, start)
            raise
        except Exception as exc:
            self._refused(topic, partition, exc, sent, start)
            raise

    def _refused(
        self,
        topic: str,
        partition: int,
        error: Exception,
        sent: Headers | list[Any] | None,
        start: float,
    ) -> None:
        """Acknowledge a record librdkafka refused, with the time spent on it as latency."""
        md = RecordMetadata(
            topic, partition if partition >= 0 else -1, latency=perf_counter() - start
        )
        self._chain.acknowledge(md, error, read_only(_kept(sent)))

    def _delivered(
        self, cb: DeliveryCallback, sent: Headers | list[Any] | None
    ) -> Callable[..., None]:
        """A record's report for ``cb``: its :func:`~kheaders._client.delivery.delivering`
        function (one per callback, kept) bound to the record's headers, a snapshot of them
        when they are the caller's list; for a record without headers, one bound method
        serves every record of the callback, so nothing is kept alive per record."""
        deliver = self._reports.of(cb)
        if sent is None:
            return deliver
        # a list that passed: the memo is its snapshot (see _fits)
        return MethodType(deliver, self._fits if type(sent) is list else _kept(sent))

    def _report(
        self,
        headers: Headers,
        cb: DeliveryCallback | None,
        java_cb: SendCallback | None,
        carrier: Carrier | None,
    ) -> Callable[..., object] | None:
        """The one object librdkafka holds for a record with closed ``headers`` until its
        report (``None`` when nobody needs one): the ``carrier`` itself (its ``sent`` set;
        it stands for ``cb``), or ``cb``'s report, or :class:`Acknowledged` when interceptors
        or ``java_cb`` need the metadata."""
        if carrier is not None:
            carrier.sent = headers
            if self._acking:  # it acknowledges itself (see _produce_carried)
                plain_pairs(headers)
                return carrier
            cb = carrier
        if cb is not None or java_cb is not None or self._ack is not None:
            plain_pairs(headers)  # kept in flight: tuples the collector stops tracking
        if self._ack is None and java_cb is None:
            if carrier is not None or cb is None:
                return cb
            return self._delivered(cb, headers)
        return Acknowledged(headers, self._ack, cb, java_cb)

    def _produce_carried(  # noqa: PLR0917 - produce()'s arguments
        self,
        carrier: Carrier,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        timestamp: int,
        headers: HeaderTypes,
    ) -> None:
        """:meth:`produce` with ``carrier`` as the record's delivery report (kheaders.aio's
        future): on the lean path it is the only object the record keeps alive in flight.

        When the interceptors only acknowledge (``_acking``), the carrier is that record's
        only report too, so it must run ``_ack`` (the chain's ``on_acknowledgement``) with
        the RecordMetadata, error and read-only headers before anything else.

        Raises as :meth:`produce`.
        """
        if not self._lean:
            if self._acking:
                return self._produce_acked(
                    topic, value, key, partition, None, timestamp, headers, carrier
                )
            record = ProducerRecord(
                topic,
                value,
                key,
                writable(headers),
                None if partition < 0 else partition,
                timestamp or None,
            )
            return self._send(record, None, None, carrier)
        sent: Any = headers
        if headers is not None and not _vouched(headers, self._fits):
            if type(headers) is list and plain_list(headers, self._limits):  # as in produce()
                self._fits = tuple(headers)
                sent = headers or None
            else:
                sent = self._checked(headers)
        carrier.sent = self._fits if type(sent) is list else _kept(sent)  # as in _delivered
        try:
            return self._carry(topic, value, key, partition, carrier, None, timestamp, sent)
        except BufferError:
            if self._park is None:
                raise
            return self._park(topic, value, key, partition, carrier, None, timestamp, sent)
        except TypeError as exc:
            if sent is headers and type(headers) is list and headers:
                return self._memo_refused(
                    topic, value, key, partition, timestamp, headers, carrier=carrier
                )
            raise unsendable(topic, key, value, exc) from exc

    def _memo_refused(  # noqa: PLR0917 - produce()'s arguments
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        timestamp: int,
        headers: list[Any],
        cb: DeliveryCallback | None = None,
        carrier: Carrier | None = None,
    ) -> None:
        """librdkafka refused a record whose header list passed the plain checks: check the
        headers the full way (which names a header at fault), then let librdkafka say again.

        Raises as :meth:`produce`.
        """
        self._fits = _NOTHING_CHECKED
        sent = self._checked(headers)
        report: Callable[..., object] | None = carrier
        if carrier is not None:
            carrier.sent = _kept(sent)
        elif cb is not None:
            report = self._delivered(cb, sent)
        try:
            return self._raw_produce(topic, value, key, partition, report, None, timestamp, sent)
        except TypeError as exc:
            raise unsendable(topic, key, value, exc) from exc

    def _checked(self, headers: HeaderTypes) -> Headers | list[Any] | None:
        """What librdkafka gets for headers passed with a record nobody else sees.

        Raises as :func:`~kheaders._client.outgoing.writable` and
        :func:`~kheaders._client.outgoing.closed`.
        """
        if type(headers) is list and plain_list(headers, self._limits):
            if not headers:
                return None
            self._fits = tuple(headers)  # the next record with these pairs skips the check
            return headers
        return closed(writable(headers), self._limits) or None

    def send(self, record: ProducerRecord, on_delivery: SendCallback | None = None) -> None:
        """Send a :class:`ProducerRecord`; ``on_delivery(metadata, error)`` as in Java.

        When sending fails before librdkafka accepted the record, the exception is raised here
        (``on_delivery`` is not called; interceptors' ``on_acknowledgement`` is).
        Raises as :meth:`produce`.
        """
        if record.headers.read_only:
            raise ReadOnlyHeadersError(READ_ONLY_MESSAGE)
        self._send(record, None, on_delivery)

    def _send(
        self,
        record: ProducerRecord,
        cb: DeliveryCallback | None,
        java_cb: SendCallback | None,
        carrier: Carrier | None = None,
    ) -> None:
        start = perf_counter()
        chain = self._chain
        topic = record.topic
        headers = record.headers
        try:
            beneath = self._beneath
            if chain.on_send:  # raises only in strict mode
                kept = None if beneath is None else passed(headers)
                record = chain.send(record)
                topic = record.topic
                headers = record.headers
                if type(headers) is not Headers:
                    headers = record.headers = Headers(headers)
                if kept is not None:
                    leave_to_instrumentation(beneath, headers, kept)
            elif type(headers) is not Headers:
                headers = record.headers = Headers(headers)
            key = record.key
            value = record.value
            # the serializers called here, not through a helper: one frame less per record
            ser = self._key_ser
            if ser is not None:
                try:
                    key = ser(topic, headers, key)
                except Exception as exc:
                    raise _serialization_error("key", topic, exc) from exc
            ser = self._value_ser
            if ser is not None:
                try:
                    value = ser(topic, headers, value)
                except Exception as exc:
                    raise _serialization_error("value", topic, exc) from exc
            closed(headers, self._limits)
            report = self._report(headers, cb, java_cb, carrier)
            partition = record.partition
            try:
                self._raw_produce(
                    topic,
                    value,
                    key,
                    -1 if partition is None else partition,
                    report,
                    None,
                    record.timestamp or 0,
                    headers or None,
                )
            except TypeError as exc:
                raise unsendable(topic, key, value, exc) from exc
        except Exception as exc:
            if chain.on_acknowledgement:
                part = -1 if record.partition is None else record.partition
                md = RecordMetadata(topic, part, latency=perf_counter() - start)
                chain.acknowledge(md, exc, _readable(headers))
            raise

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
        _check_batch(messages, self._key_ser is None, self._value_ser is None)
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
            self._chain.close()
        return not remaining

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


def _serialization_error(field: str, topic: str, exc: Exception) -> SerializationError:
    """The error for a ``field`` (key or value) serializer that raised ``exc``."""
    return SerializationError(
        f"{field} serializer failed for a record to topic {topic!r}: {type(exc).__name__}: {exc}",
        topic=topic,
        field=field,
    )


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


def _kept(sent: Headers | list[Any] | None) -> Kept:
    """What a report keeps of the headers handed to librdkafka (see ``delivery.Kept``): a
    plain list as a tuple, closed Headers with plain-tuple pairs (``plain_pairs``: the
    collector stops tracking them), the shared empty Headers for none."""
    if type(sent) is list:
        return tuple(sent)
    if sent is None:
        return EMPTY
    return plain_pairs(sent)  # type: ignore[arg-type]  # closed Headers


def _readable(headers: object) -> Headers:
    return headers if type(headers) is Headers else EMPTY


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
