"""How a producer hands each record to librdkafka: one path, chosen when the producer is built.

As structlog picks a logger's methods once, when it builds the logger,
``kheaders._client.producer.path_for`` picks what every record of a producer goes through,
from what can see the records:

* ``PlainPath`` (:mod:`kheaders._client.direct`): nothing sees a record before librdkafka
  (no ``on_send``, no serializer, no ``on_acknowledgement``): its headers are checked
  (:class:`OutgoingHeaders`) and handed over; a delivery callback's report is one small
  object over their snapshot, none at all for a record without headers
  (:mod:`kheaders._client.delivery`).
* ``AckingPath`` (the same module): interceptors only acknowledge: the same checks, and one
  report that runs ``on_acknowledgement`` (the read-only Headers and RecordMetadata are built
  when the report comes). A record refused on the way (bad headers, a full queue) is acknowledged
  with the error, the headers as given, and the time spent as the metadata's ``latency``.
* :class:`InterceptedPath`: ``on_send`` or serializers see the record: a
  :class:`ProducerRecord` through the chain (:meth:`Path.send`, which Java's ``send``
  takes on every path).

Every path also carries records for kheaders.aio (:meth:`Path.carry`): the caller's
:class:`~kheaders._client.delivery.Carrier` (a future) is the record's report.
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from types import MethodType
from typing import Any, ClassVar

from kheaders._client.beneath import leave_to_instrumentation, passed
from kheaders._client.chain import InterceptorChain
from kheaders._client.delivery import (
    AckHook,
    Acknowledged,
    Carrier,
    DeliveryCallback,
    Reports,
    SendCallback,
    delivering,
)
from kheaders._client.outgoing import EMPTY, OutgoingHeaders, Sent, closed, writable
from kheaders._client.rawcall import RawProduce, unsendable
from kheaders._client.records import ProducerRecord, RecordMetadata
from kheaders._errors import SerializationError
from kheaders._model.headers import Headers, HeaderTypes, plain_pairs


class Path:
    """The parts every path shares, and the record path (:meth:`send`) they all fall back to.

    ``produce(topic, value, key, partition, cb, timestamp, headers)`` sends one record with
    ``cb`` (or ``None``) as its delivery callback; ``carry(carrier, topic, value, key,
    partition, timestamp, headers)`` with ``carrier`` as its report. Both raise as
    ``Producer.produce``.
    """

    __slots__ = (
        "ack",
        "beneath",
        "carry_produce",
        "chain",
        "gate",
        "key_ser",
        "park",
        "raw_produce",
        "reports",
        "value_ser",
    )

    sees_records: ClassVar[bool] = False
    """Whether interceptors' ``on_send`` or serializers see each record (kheaders.aio's
    ``send()`` then goes through :meth:`send`)."""
    acknowledge: AckHook | None = None
    """What each carrier must run before anything else (the chain's ``on_acknowledgement``)
    on the path whose carriers are the records' only reports (:class:`AckingPath`)."""

    def __init__(  # noqa: PLR0917 - the producer's parts, set once
        self,
        chain: InterceptorChain,
        gate: OutgoingHeaders,
        raw_produce: RawProduce,
        carry_produce: RawProduce,
        park: RawProduce | None,
        key_ser: Callable[..., object] | None,
        value_ser: Callable[..., object] | None,
        beneath: object,
    ) -> None:
        self.chain = chain
        self.gate = gate
        self.raw_produce = raw_produce
        self.carry_produce = carry_produce
        """What a carried record is handed to: ``raw_produce``, or for kheaders.aio
        confluent's C ``produce`` itself (its caller keeps the order of parked records)."""
        self.park = park
        """Where a carried record librdkafka's full queue refused goes (``produce``'s 8
        arguments); ``None``: BufferError is raised, as confluent does."""
        self.key_ser = key_ser
        self.value_ser = value_ser
        self.beneath = beneath
        """The client whose OpenTelemetry instrumentation injects trace context, or ``None``."""
        # bound once: a bound method made per record would be one more object in flight
        self.ack = chain.acknowledge if chain.on_acknowledgement else None
        self.reports = Reports(delivering)

    def produce(  # noqa: PLR0917 - produce()'s arguments
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        cb: DeliveryCallback | None,
        timestamp: int,
        headers: HeaderTypes,
    ) -> None:
        self.record(topic, value, key, partition, cb, timestamp, headers)

    def carry(  # noqa: PLR0917 - produce()'s arguments
        self,
        carrier: Carrier,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        timestamp: int,
        headers: HeaderTypes,
    ) -> None:
        self.record(topic, value, key, partition, None, timestamp, headers, carrier)

    # -- the record path ----------------------------------------------------------------------

    def record(  # noqa: PLR0917 - produce()'s arguments
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
        """``produce`` as a :class:`ProducerRecord` through :meth:`send`."""
        record = ProducerRecord(
            topic,
            value,
            key,
            writable(headers),
            None if partition < 0 else partition,
            timestamp or None,
        )
        self.send(record, cb, None, carrier)

    def send(
        self,
        record: ProducerRecord,
        cb: DeliveryCallback | None,
        java_cb: SendCallback | None,
        carrier: Carrier | None = None,
    ) -> None:
        """``record`` through ``on_send``, the serializers, the limits, then librdkafka; a
        failure on the way is acknowledged (with the time spent as latency), then raised."""
        start = perf_counter()
        chain = self.chain
        topic = record.topic
        headers = record.headers
        try:
            beneath = self.beneath
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
            ser = self.key_ser
            if ser is not None:
                try:
                    key = ser(topic, headers, key)
                except Exception as exc:
                    raise _serialization_error("key", topic, exc) from exc
            ser = self.value_ser
            if ser is not None:
                try:
                    value = ser(topic, headers, value)
                except Exception as exc:
                    raise _serialization_error("value", topic, exc) from exc
            closed(headers, self.gate.limits)
            report = self._report(headers, cb, java_cb, carrier)
            partition = record.partition
            try:
                self.raw_produce(
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
                chain.acknowledge(md, exc, headers if type(headers) is Headers else EMPTY)
            raise

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
            if self.acknowledge is not None:  # it acknowledges itself (see AckingPath)
                plain_pairs(headers)
                return carrier
            cb = carrier
        ack = self.ack
        if cb is not None or java_cb is not None or ack is not None:
            plain_pairs(headers)  # kept in flight: tuples the collector stops tracking
        if ack is None and java_cb is None:
            if carrier is not None or cb is None:
                return cb
            return self.delivered(cb, headers)
        return Acknowledged(headers, ack, cb, java_cb)

    def delivered(self, cb: DeliveryCallback, sent: Sent) -> Callable[..., None]:
        """A record's report for ``cb``: its :func:`~kheaders._client.delivery.delivering`
        function (one per callback while records of it are in flight) bound to the record's
        kept headers; for a record without headers, the function itself, so nothing is kept
        alive per record."""
        deliver = self.reports.of(cb)
        if sent is None:
            return deliver
        return MethodType(deliver, self.gate.kept(sent))


class InterceptedPath(Path):
    """``on_send`` or serializers see every record: each goes the record path."""

    __slots__ = ()
    sees_records = True


def _serialization_error(field: str, topic: str, exc: Exception) -> SerializationError:
    """The error for a ``field`` (key or value) serializer that raised ``exc``."""
    return SerializationError(
        f"{field} serializer failed for a record to topic {topic!r}: {type(exc).__name__}: {exc}",
        topic=topic,
        field=field,
    )
