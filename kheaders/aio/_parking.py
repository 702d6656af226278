"""Backpressure without BufferError: a librdkafka producer that parks what its full queue refuses.

librdkafka refuses a record with ``BufferError`` when its queue is full
(``queue.buffering.max.messages`` / ``queue.buffering.max.kbytes``). By then kheaders'
Producer has run the interceptors, the serializers and the limit check, and closed the
headers: the record cannot be sent again from the top without running them twice. So the
async producer builds its kheaders Producer over :class:`ParkingProducer`, whose ``produce``
keeps such a record, exactly as it was handed over (delivery report attached), and every
record after it, in order, until :meth:`ParkingProducer.unpark` finds room for them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, Message

from kheaders._client.producer import Producer
from kheaders._client.sending import Handed, RawProduce

_produce = confluent_kafka.cimpl.Producer.produce

Parked = Handed
"""A parked record: ``produce``'s 8 arguments, by position (see :data:`_FIELDS`)."""


class ParkingProducer(confluent_kafka.cimpl.Producer):
    """``confluent_kafka.Producer`` whose ``produce`` parks records instead of raising
    BufferError. Only the thread of the event loop produces and unparks.

    confluent's own class (``cimpl``), never the name ``confluent_kafka.Producer``, which
    OpenTelemetry's ``instrument()`` may have swapped for its subclass before this module was
    imported: the instrumentation leaves asyncio clients alone (as it leaves confluent's
    ``confluent_kafka.aio`` alone), so the interceptors trace them, whatever the import order.
    """

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        self.parked: deque[Parked] = deque()

    def produce(  # noqa: PLR0917 - confluent's positional order
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        callback: Any = None,
        on_delivery: Any = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        # named parameters, passed on by position (no dict built per record); the report as
        # ``callback``: confluent ignores a positional ``on_delivery`` after a None ``callback``
        args = (topic, value, key, partition, callback or on_delivery, None, timestamp, headers)
        if self.parked:  # behind the records already waiting: order is kept
            self.parked.append(args)
            return
        try:
            _produce(self, *args)
        except BufferError:
            self.parked.append(args)

    def unpark(self) -> None:
        """Hand parked records to librdkafka, oldest first, until it refuses one for room.

        A record it rejects for another reason (an unknown partition, ...) is reported
        through its delivery report with that error, as any failed record is.
        """
        parked = self.parked
        while parked:
            args = parked[0]
            try:
                _produce(self, *args)
            except BufferError:
                return
            except Exception as exc:
                _report_failure(args, _kafka_error(exc))
            parked.popleft()

    def fail_parked(self) -> int:
        """Report every parked record as purged (``_PURGE_QUEUE``), as librdkafka's purge
        does for its own queue; return how many there were."""
        count = len(self.parked)
        while self.parked:
            _report_failure(self.parked.popleft(), KafkaError(KafkaError._PURGE_QUEUE))
        return count


class LoopProducer(Producer):
    """kheaders' Producer over a :class:`ParkingProducer`: the async producer's engine.

    Its records go to confluent's C ``produce`` directly, not through
    :meth:`ParkingProducer.produce`: the producer's sender parks them itself, in the same
    :attr:`ParkingProducer.parked` (behind those waiting; one refused for room).
    """

    _client_class = ParkingProducer

    def _handing(
        self, raw: confluent_kafka.Producer, produce: RawProduce
    ) -> tuple[RawProduce, deque[Handed] | None]:
        if isinstance(raw, ParkingProducer):
            return _produce.__get__(raw), raw.parked
        return produce, None


def _kafka_error(exc: Exception) -> KafkaError:
    if isinstance(exc, KafkaException) and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return KafkaError(KafkaError._INVALID_ARG, f"{type(exc).__name__}: {exc}")


_FIELDS = ("topic", "value", "key", "partition", "callback", "on_delivery", "timestamp", "headers")


def _report_failure(args: Parked, err: KafkaError) -> None:
    """Call a parked record's delivery report with ``err`` (as librdkafka would)."""
    topic, value, key, partition, callback, on_delivery, _timestamp, _headers = args
    report: Callable[[KafkaError, Message], object] | None = callback or on_delivery
    if report is None:
        return
    msg = Message(
        topic=topic,
        partition=partition if isinstance(partition, int) else -1,
        key=key,
        value=value,
        error=err,
    )
    report(err, msg)
