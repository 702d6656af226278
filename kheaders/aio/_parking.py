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

_produce = confluent_kafka.Producer.produce

Parked = tuple[tuple[Any, ...], dict[str, Any]]


class ParkingProducer(confluent_kafka.Producer):
    """``confluent_kafka.Producer`` whose ``produce`` parks records instead of raising
    BufferError. Only the thread of the event loop produces and unparks."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        self.parked: deque[Parked] = deque()

    def produce(self, *args: Any, **kwargs: Any) -> None:
        if self.parked:  # behind the records already waiting: order is kept
            self.parked.append((args, kwargs))
            return
        try:
            _produce(self, *args, **kwargs)
        except BufferError:
            self.parked.append((args, kwargs))

    def unpark(self) -> None:
        """Hand parked records to librdkafka, oldest first, until it refuses one for room.

        A record it rejects for another reason (an unknown partition, ...) is reported
        through its delivery report with that error, as any failed record is.
        """
        parked = self.parked
        while parked:
            args, kwargs = parked[0]
            try:
                _produce(self, *args, **kwargs)
            except BufferError:
                return
            except Exception as exc:
                _report_failure(args, kwargs, _kafka_error(exc))
            parked.popleft()

    def fail_parked(self) -> int:
        """Report every parked record as purged (``_PURGE_QUEUE``), as librdkafka's purge
        does for its own queue; return how many there were."""
        count = len(self.parked)
        while self.parked:
            args, kwargs = self.parked.popleft()
            _report_failure(args, kwargs, KafkaError(KafkaError._PURGE_QUEUE))
        return count


class LoopProducer(Producer):
    """kheaders' Producer over a :class:`ParkingProducer`: the async producer's engine."""

    _client_class = ParkingProducer


def _kafka_error(exc: Exception) -> KafkaError:
    if isinstance(exc, KafkaException) and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return KafkaError(KafkaError._INVALID_ARG, f"{type(exc).__name__}: {exc}")


_FIELDS = ("topic", "value", "key", "partition", "callback", "on_delivery")


def _report_failure(args: tuple[Any, ...], kwargs: dict[str, Any], err: KafkaError) -> None:
    """Call a parked record's delivery report with ``err`` (as librdkafka would)."""
    given = dict(zip(_FIELDS, args, strict=False)) | kwargs
    report: Callable[[KafkaError, Message], object] | None = given.get("callback") or given.get(
        "on_delivery"
    )
    if report is None:
        return
    partition = given.get("partition", -1)
    msg = Message(
        topic=given.get("topic"),
        partition=partition if isinstance(partition, int) else -1,
        key=given.get("key"),
        value=given.get("value"),
        error=err,
    )
    report(err, msg)
