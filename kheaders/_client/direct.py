"""The paths of records no interceptor or serializer sees: handed to librdkafka directly.

:class:`PlainPath` (nothing sees them) and :class:`AckingPath` (interceptors only
acknowledge them); see :mod:`kheaders._client.paths` for how a producer chooses.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from time import perf_counter
from types import MethodType
from typing import Any

from kheaders._client.delivery import (
    Carrier,
    DeliveryCallback,
    Reports,
    acknowledging,
    read_only,
)
from kheaders._client.outgoing import Sent, snapshot
from kheaders._client.paths import Path
from kheaders._client.rawcall import unsendable
from kheaders._client.records import RecordMetadata
from kheaders._model.headers import HeaderTypes


class PlainPath(Path):
    """Nothing sees a record before librdkafka: only its headers are checked."""

    __slots__ = ()

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
        sent = None if headers is None else self.gate.sent(headers)
        report = None if cb is None else self.delivered(cb, sent)
        try:
            return self.raw_produce(topic, value, key, partition, report, None, timestamp, sent)
        except TypeError as exc:
            if type(sent) is list:  # the caller's list, let through
                return self._refused_list(topic, value, key, partition, timestamp, sent, cb)
            raise unsendable(topic, key, value, exc) from exc

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
        """On this path the carrier is the only object the record keeps alive in flight."""
        gate = self.gate
        sent = None if headers is None else gate.sent(headers)
        carrier.sent = gate.kept(sent)
        try:
            return self.carry_produce(topic, value, key, partition, carrier, None, timestamp, sent)
        except BufferError:
            if self.park is None:
                raise
            return self.park(topic, value, key, partition, carrier, None, timestamp, sent)
        except TypeError as exc:
            if type(sent) is list:  # the caller's list, let through
                return self._refused_list(
                    topic, value, key, partition, timestamp, sent, carrier=carrier
                )
            raise unsendable(topic, key, value, exc) from exc

    def _refused_list(  # noqa: PLR0917 - produce()'s arguments
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
        """librdkafka refused a record whose header list the memo or the plain check let
        through: check the headers again (the full check names a header at fault), then let
        librdkafka say again."""
        gate = self.gate
        gate.forget()
        sent = gate.sent(headers)
        report: Callable[..., object] | None = carrier
        if carrier is not None:
            carrier.sent = snapshot(sent)
        elif cb is not None:
            report = self.delivered(cb, sent)
        try:
            return self.raw_produce(topic, value, key, partition, report, None, timestamp, sent)
        except TypeError as exc:
            raise unsendable(topic, key, value, exc) from exc


class AckingPath(Path):
    """Interceptors only acknowledge: the plain path's checks, and a report from
    :func:`~kheaders._client.delivery.acknowledging` over the headers' snapshot (no
    ProducerRecord, Headers or RecordMetadata until the report). Headers the checks refuse
    take the record path, which checks them again and acknowledges the refusal.

    A carrier is the record's only report here, so it runs :attr:`acknowledge` itself; one
    librdkafka's full queue refuses is parked when the producer parks, not acknowledged.
    """

    __slots__ = ("acknowledge", "acks")

    def __init__(self, *parts: Any) -> None:
        super().__init__(*parts)
        ack = self.ack
        assert ack is not None  # chosen for a chain with on_acknowledgement (path_for)
        self.acknowledge = ack
        self.acks = Reports(partial(acknowledging, ack))

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
        self._acked(topic, value, key, partition, cb, timestamp, headers, None)

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
        self._acked(topic, value, key, partition, None, timestamp, headers, carrier)

    def _acked(  # noqa: PLR0917 - produce()'s arguments
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int,
        cb: DeliveryCallback | None,
        timestamp: int,
        headers: HeaderTypes,
        carrier: Carrier | None,
    ) -> None:
        start = perf_counter()
        gate = self.gate
        try:
            sent = None if headers is None else gate.sent(headers)
        except Exception:
            return self.record(topic, value, key, partition, cb, timestamp, headers, carrier)
        report: Callable[..., object]
        produce = self.raw_produce
        if carrier is not None:
            carrier.sent = gate.kept(sent)
            report = carrier
            produce = self.carry_produce
        else:
            acknowledge = self.acks.of(cb)
            report = acknowledge if sent is None else MethodType(acknowledge, gate.kept(sent))
        try:
            return produce(topic, value, key, partition, report, None, timestamp, sent)
        except TypeError as exc:
            if type(sent) is list:
                # librdkafka refused a list that passed the plain checks: the full checks name why
                gate.forget()
                return self.record(topic, value, key, partition, cb, timestamp, headers, carrier)
            error = unsendable(topic, key, value, exc)
            self._refused(topic, partition, error, sent, start)
            raise error from exc
        except BufferError as exc:
            if carrier is not None and self.park is not None:
                return self.park(topic, value, key, partition, report, None, timestamp, sent)
            self._refused(topic, partition, exc, sent, start)
            raise
        except Exception as exc:
            self._refused(topic, partition, exc, sent, start)
            raise

    def _refused(
        self, topic: str, partition: int, error: Exception, sent: Sent, start: float
    ) -> None:
        """Acknowledge a record librdkafka refused, with the time spent on it as latency."""
        md = RecordMetadata(
            topic, partition if partition >= 0 else -1, latency=perf_counter() - start
        )
        self.chain.acknowledge(md, error, read_only(snapshot(sent)))
