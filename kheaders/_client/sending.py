"""Sending: one preparation per record, from the caller's arguments to librdkafka's ``produce``.

A producer builds one :class:`Sender` and fixes, once, what its records go through, in Kafka's
order (structlog-style: the choice is made at construction, not per record):

* when interceptors' ``on_send`` or serializers see records (:attr:`Sender.sees_records`),
  each becomes a :class:`ProducerRecord` with writable :class:`Headers`: every ``on_send``, the
  key then the value serializer (given a :class:`SerializationContext` when they take one),
  the header limits, ``headers.close()``;
* otherwise the record is not built at all: :class:`OutgoingHeaders` checks the headers as
  given (a list of ``(str, bytes)`` tuples seen before costs an identity comparison per
  pair) and librdkafka gets them as they are.

Either way the record's report (:mod:`kheaders._client.reports`; ``None`` when nothing waits
for it) gets the headers it keeps, and :meth:`Sender.hand` passes the record to librdkafka. A
record refused on the way is acknowledged to interceptors (with the time spent as the
metadata's ``latency``) and the error raised, except where the producer parks records
librdkafka's full queue refuses (kheaders.aio): they wait, in order, with their reports.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from time import perf_counter
from typing import Any, TypeAlias

import confluent_kafka

from kheaders._client.chain import InterceptorChain
from kheaders._client.records import ProducerRecord, RecordMetadata
from kheaders._client.reports import EMPTY, Carrier, Kept, Reporter, read_only
from kheaders._errors import ReadOnlyHeadersError, SerializationError
from kheaders._log import get_logger
from kheaders._model.headers import READ_ONLY_MESSAGE, Headers, HeaderTypes, plain_pairs
from kheaders._model.limits import HeaderLimits, check_sendable, plain_fit
from kheaders._serde.protocols import SerializationContext, takes_context

_log = get_logger("kheaders.producer")

Handed: TypeAlias = "tuple[Any, ...]"
"""A record as librdkafka's ``produce`` takes it, by position: ``(topic, value, key,
partition, report, None, timestamp, headers)``; what a parked record waits as."""
RawProduce = Callable[..., None]
"""confluent's ``produce``, called with a :data:`Handed` record's 8 arguments by position."""
Sent: TypeAlias = "Headers | list[Any] | None"
"""What librdkafka is handed for a record's headers: the caller's list as it is, closed
Headers, or ``None``."""

_C_PRODUCE = confluent_kafka.cimpl.Producer.produce
"""confluent's own ``produce`` (the C class: OpenTelemetry's ``instrument()`` replaces only
``confluent_kafka.Producer``, the name)."""
_NOTHING_CHECKED: tuple[Any, ...] = (object(),)
"""Holds no header pair: the memo before any list passed the checks."""


# -- headers at the produce edge ---------------------------------------------------------------


def writable(headers: HeaderTypes) -> Headers:
    """The record's writable Headers; the given object itself when it is a Headers.

    Raises ReadOnlyHeadersError for closed Headers (already sent or received), and what the
    Headers model raises for a bad pair.
    """
    if headers is None:
        return Headers()
    if type(headers) is Headers:
        if headers.read_only:
            raise ReadOnlyHeadersError(READ_ONLY_MESSAGE)
        return headers
    return Headers(headers)


def closed(headers: Headers, limits: HeaderLimits | None) -> Headers:
    """``headers`` checked against ``limits`` (when given), then closed; returned.

    Raises what :func:`~kheaders._model.limits.check_sendable` raises (InvalidNameError for a
    key librdkafka cannot take, HeaderLimitError naming the limit and key); the headers then
    stay writable.
    """
    check_sendable(headers, limits)
    return headers.close()


class OutgoingHeaders:
    """A producer's header checks (the model's rules, then its ``limits``) and their memo.

    The memo is the pairs of the last header list that passed, as a tuple. A list holding
    those very pair objects (identity per pair) is not checked again, so the usual "same
    headers on every record" costs next to nothing. Identity, not equality: a tuple is
    immutable, so the same tuple objects mean the same exact ``str`` keys and ``bytes`` values
    that were checked, while an equal pair may hold a ``str`` subclass key (librdkafka would
    send ``str()`` of it) or a ``bytearray`` value.
    """

    __slots__ = ("_memo", "limits")

    def __init__(self, limits: HeaderLimits | None) -> None:
        self.limits = limits
        self._memo: tuple[Any, ...] = _NOTHING_CHECKED

    def sent(self, headers: HeaderTypes) -> Sent:
        """What librdkafka gets for ``headers``: the caller's list itself when the memo
        vouches for it or :func:`~kheaders._model.limits.plain_fit` accepts it (it becomes
        the memo), else closed Headers (:func:`closed`); ``None`` for none.

        Raises as :func:`writable` and :func:`closed`.
        """
        if type(headers) is list:
            memo = self._memo
            if len(headers) == len(memo):
                for i in range(len(memo)):
                    if headers[i] is not memo[i]:
                        break
                else:  # the very pairs that passed
                    return headers
            if plain_fit(headers, self.limits):
                if not headers:
                    return None
                self._memo = tuple(headers)
                return headers
        elif headers is None:
            return None
        return closed(writable(headers), self.limits) or None

    def kept(self, sent: Sent) -> Kept:
        """What the report of a record handed ``sent`` keeps: for a list that passed, the
        memo (it holds the list's very pairs: shared by every record with those headers);
        closed Headers with plain-tuple pairs; the shared empty Headers for none."""
        if type(sent) is list:
            return self._memo
        if sent is None:
            return EMPTY
        return plain_pairs(sent)  # type: ignore[arg-type]  # closed Headers

    def forget(self) -> None:
        """Check every list again: librdkafka refused one the memo or the plain check let
        through (the full check names the header at fault)."""
        self._memo = _NOTHING_CHECKED


# -- serializers --------------------------------------------------------------------------------


class FieldSerializer:
    """A key or value serializer as the sender calls it: ``serialize(topic, headers, data)``,
    or with ``context=`` (a :class:`SerializationContext` carrying the record key) when its
    signature names that keyword. Raises SerializationError chaining what it raised."""

    __slots__ = ("field", "in_context", "serialize")

    def __init__(self, field: str, serialize: Callable[..., object]) -> None:
        self.field = field
        self.serialize = serialize
        self.in_context = takes_context(serialize)

    def __call__(self, topic: str, headers: Headers, key: Any, data: Any) -> Any:
        """``data`` serialized for a record to ``topic`` whose key (as sent) is ``key``."""
        try:
            if self.in_context:
                context = SerializationContext(topic, headers, key, self.field)
                return self.serialize(topic, headers, data, context=context)
            return self.serialize(topic, headers, data)
        except Exception as exc:
            raise SerializationError(
                f"{self.field} serializer failed for a record to topic {topic!r}:"
                f" {type(exc).__name__}: {exc}",
                topic=topic,
                field=self.field,
            ) from exc


# -- handing over to librdkafka ---------------------------------------------------------------


def handing(raw: object, positional: bool) -> RawProduce:
    """How ``raw``'s ``produce`` takes a :data:`Handed` record: by position when it is
    confluent's own C ``produce`` (its fastest call) or the ``produce`` of the producer's own
    ``_client_class`` (``positional``); any other (``SerializingProducer``'s, OpenTelemetry's
    instrumented producer's, a subclass's) with keyword arguments and a plain list of headers
    it may add to, as its author expects (OTel finds ``headers`` by keyword)."""
    produce: RawProduce = raw.produce  # type: ignore[attr-defined]
    if positional or getattr(type(raw), "produce", None) is _C_PRODUCE:
        return produce
    return _Keywords(produce)


class _Keywords:
    """A :data:`RawProduce` over a ``produce`` that is called with keyword arguments."""

    __slots__ = ("produce",)

    def __init__(self, produce: RawProduce) -> None:
        self.produce = produce

    def __call__(self, *handed: Any) -> None:
        topic, value, key, partition, report, _, timestamp, headers = handed
        self.produce(
            topic,
            value=value,
            key=key,
            partition=partition,
            on_delivery=report,
            timestamp=timestamp,
            headers=[] if headers is None else list(headers),
        )


def unsendable(handed: Handed, exc: TypeError) -> TypeError:
    """The error for a key or value librdkafka cannot send (no serializer turned it to bytes);
    ``exc`` itself when neither is at fault."""
    topic, value, key = handed[:3]
    for field, data in (("value", value), ("key", key)):
        if data is not None and not isinstance(data, bytes | str):
            return TypeError(
                f"the {field} of a record to topic {topic!r} is {type(data).__name__}, which"
                f" confluent-kafka cannot send (it takes bytes, str or None): set a"
                f" {field}_serializer (e.g. kheaders.JsonSerializer()) or encode it first"
            )
    return exc


# -- OpenTelemetry's instrumentation beneath the producer -------------------------------------

_OTEL_MODULE = "opentelemetry.instrumentation.confluent_kafka"
INSTRUMENTATION = "opentelemetry-instrumentation-confluent-kafka"
"""The distribution whose instrumentation may sit beneath a producer."""
TRACE_FIELDS = ("traceparent", "tracestate")
"""The W3C trace context fields the instrumentation writes."""
_said = False
"""Whether the one line saying which side injects was logged (once per process)."""


def instrumented(client: object) -> bool:
    """True when ``client``'s class comes from OpenTelemetry's confluent-kafka instrumentation
    (``instrument()`` swaps ``confluent_kafka.Producer`` for a subclass whose ``produce``
    injects; ``instrument_producer(p)`` returns a proxy that does): checked once, when the
    producer is built. A producer built before ``instrument()`` never has it beneath."""
    return any(k.__module__ == _OTEL_MODULE for k in type(client).__mro__)


def _injecting(client: object) -> bool:
    """True while ``client``'s ``produce`` injects: a proxy always, an
    ``AutoInstrumentedProducer`` until ``uninstrument()`` unwraps it."""
    for klass in type(client).__mro__:
        if klass.__module__ == _OTEL_MODULE:
            if klass.__name__ == "AutoInstrumentedProducer":
                return hasattr(klass.__dict__.get("produce"), "__wrapped__")
            return True
    return False


def leave_to_instrumentation(client: object, headers: Headers, kept: tuple[str, ...]) -> None:
    """While ``client``'s instrumentation injects (it runs after the interceptors, so it would
    add a second ``traceparent`` and W3C consumers would restart the trace), remove the trace
    fields interceptors added to ``headers``; those in ``kept`` (the caller's own) stay."""
    if not _injecting(client):
        return
    added = [f for f in TRACE_FIELDS if f not in kept and f in headers]
    if not added:
        return
    for field in added:
        headers.remove(field)
    global _said  # noqa: PLW0603 - one line per process, not per record
    if not _said:
        _said = True
        _log.info(
            "trace context injected by the OpenTelemetry instrumentation beneath this producer"
            " (set up first); the trace headers kheaders' interceptors wrote are left out",
            injects=INSTRUMENTATION,
            left_out=added,
            client=type(client).__qualname__,
        )


# -- the sender --------------------------------------------------------------------------------


class Sender:
    """One producer's preparation of every record (see the module doc), its parts fixed once.

    ``hand`` is librdkafka's ``produce`` (:func:`handing`); ``parked``, when given, is where a
    record its full queue refuses waits (and every record after it, in order) instead of
    BufferError; ``beneath`` is the client whose OpenTelemetry instrumentation injects trace
    context (see :func:`instrumented`), or ``None``.

    :attr:`send` is chosen once, as structlog binds a logger's methods once: the record way
    (a :class:`ProducerRecord` through ``on_send`` and the serializers, then the checks) when
    those see records, else the checks alone. Both end in the one hand-over.
    """

    __slots__ = (
        "ack",
        "beneath",
        "chain",
        "gate",
        "hand",
        "key_ser",
        "parked",
        "reporter",
        "sees_records",
        "send",
        "value_ser",
    )

    def __init__(
        self,
        chain: InterceptorChain,
        limits: HeaderLimits | None,
        hand: RawProduce,
        *,
        serializers: tuple[Callable[..., object] | None, Callable[..., object] | None],
        parked: deque[Handed] | None = None,
        beneath: object = None,
    ) -> None:
        key_ser, value_ser = serializers
        self.chain = chain
        self.gate = OutgoingHeaders(limits)
        self.hand = hand
        self.parked = parked
        self.beneath = beneath
        self.key_ser = None if key_ser is None else FieldSerializer("key", key_ser)
        self.value_ser = None if value_ser is None else FieldSerializer("value", value_ser)
        self.ack = chain.acknowledge if chain.on_acknowledgement else None
        self.sees_records: bool = (
            bool(chain.on_send) or key_ser is not None or value_ser is not None
        )
        """Whether ``on_send`` or serializers see each record (a ProducerRecord is built)."""
        self.reporter = Reporter(self.ack, share=not self.sees_records)
        """What every report of this producer does first (shared with kheaders.aio)."""
        self.send: Callable[..., None] = self._as_record if self.sees_records else self._checked
        """``send(topic, value, key, headers, report, /, *, partition=-1, timestamp=0)``: one
        record, ``produce``'s arguments, with ``report`` (or none) as its delivery report.
        Raises as ``Producer.produce``."""

    def send_record(self, record: ProducerRecord, report: Carrier | None) -> None:
        """``record`` with ``report`` (or none) as its delivery report (Java's ``send``).
        Raises as ``Producer.produce``, and ReadOnlyHeadersError for a record whose headers
        were already sent or received."""
        headers = record.headers
        if type(headers) is Headers and headers.read_only:
            raise ReadOnlyHeadersError(READ_ONLY_MESSAGE)
        if self.sees_records:
            return self._through(record, report)
        partition = record.partition
        return self._checked(
            record.topic,
            record.value,
            record.key,
            headers,
            report,
            partition=-1 if partition is None else partition,
            timestamp=record.timestamp or 0,
        )

    def _as_record(
        self,
        topic: str,
        value: Any,
        key: Any,
        headers: HeaderTypes,
        report: Carrier | None,
        /,
        *,
        partition: int = -1,
        timestamp: int = 0,
    ) -> None:
        """:attr:`send` when ``on_send`` or serializers see records. Raises as
        :func:`writable` (the record is not acknowledged then), and as :meth:`_through`."""
        record = ProducerRecord(
            topic,
            value,
            key,
            writable(headers),
            None if partition < 0 else partition,
            timestamp or None,
        )
        return self._through(record, report)

    def _through(self, record: ProducerRecord, report: Carrier | None) -> None:
        """``record`` through ``on_send`` and the serializers, then :meth:`_checked`; a
        failure on the way is acknowledged (with the time spent as latency), then raised."""
        start = perf_counter()
        chain = self.chain
        topic = record.topic
        headers = record.headers
        try:
            if chain.on_send:  # raises only in strict mode
                beneath = self.beneath
                kept = None if beneath is None else tuple(f for f in TRACE_FIELDS if f in headers)
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
            if self.key_ser is not None:
                key = self.key_ser(topic, headers, key, key)
            value = record.value
            if self.value_ser is not None:
                value = self.value_ser(topic, headers, key, value)
        except Exception as exc:
            at = -1 if record.partition is None else record.partition
            self._refused(topic, at, exc, headers, start)
            raise
        partition = record.partition
        return self._checked(
            topic,
            value,
            key,
            headers,
            report,
            partition=-1 if partition is None else partition,
            timestamp=record.timestamp or 0,
        )

    def _checked(
        self,
        topic: str,
        value: Any,
        key: Any,
        headers: HeaderTypes,
        report: Carrier | None,
        /,
        *,
        partition: int = -1,
        timestamp: int = 0,
    ) -> None:
        """The headers checked (and closed, when Headers), ``report`` given what it keeps,
        then the record handed to librdkafka (or parked). A refusal is acknowledged (except
        headers no Headers can hold, or closed ones: refused before any record existed),
        then raised."""
        start = 0.0 if self.ack is None else perf_counter()
        gate = self.gate
        try:
            sent = None if headers is None else gate.sent(headers)
        except Exception as exc:
            shown = _held(headers)
            if shown is not None:
                self._refused(topic, partition, exc, shown, start)
            raise
        if report is not None:
            report.sent = gate.kept(sent)
        handed = (topic, value, key, partition, report, None, timestamp, sent)
        parked = self.parked
        if parked:  # order is kept: behind the records already waiting
            parked.append(handed)
            return None
        try:
            self.hand(*handed)
        except BufferError as exc:
            if parked is None:
                self._refused(topic, partition, exc, read_only(gate.kept(sent)), start)
                raise
            parked.append(handed)
        except Exception as exc:
            if type(sent) is list and isinstance(exc, TypeError):
                # librdkafka refused a list the checks let through: the full checks name why
                gate.forget()
                return self._checked(
                    topic,
                    value,
                    key,
                    writable(headers),
                    report,
                    partition=partition,
                    timestamp=timestamp,
                )
            error = unsendable(handed, exc) if isinstance(exc, TypeError) else exc
            self._refused(topic, partition, error, read_only(gate.kept(sent)), start)
            if error is exc:
                raise
            raise error from exc
        return None

    def _refused(
        self, topic: str, partition: int, error: Exception, headers: Headers, start: float
    ) -> None:
        """Acknowledge a record refused before librdkafka took it (when interceptors
        acknowledge), with the time spent on it as the metadata's latency."""
        ack = self.ack
        if ack is not None:
            md = RecordMetadata(
                topic, partition if partition >= 0 else -1, latency=perf_counter() - start
            )
            ack(md, error, headers)


def _held(headers: HeaderTypes) -> Headers | None:
    """The Headers a refused record had: ``headers`` as a record holds them, ``None`` when no
    record could hold them (a bad pair, closed Headers: refused before a record existed, so
    not acknowledged)."""
    try:
        return writable(headers)
    except Exception:
        return None
