"""The transactional calls of an exactly-once processor's producer, and what their errors
mean: tried again while librdkafka says a call may be, an abortable error left to the caller
(abort and rewind), a fenced or fatally failed producer turned into ProcessingError."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kheaders._client.producer import Producer
from kheaders._errors import ProcessingError
from kheaders._model.headers import HeaderTypes
from kheaders.processing._observe import log

TIMEOUT = 30.0
"""Seconds each transactional call (init, send offsets, commit, abort) may take."""
TRIES = 3
"""Calls of one kind made while librdkafka answers that the call may be tried again."""
FENCED = frozenset(
    (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)
)


class Transactions:
    """One producer's transactions. ``open`` while one is; ``dead`` once the producer was
    fenced or failed for good (it takes no more calls). ``on_dead`` is called then (the
    processor stops).

    Every method raises ProcessingError for a fenced or fatally failed producer (naming the
    transactional id) and KafkaException for an error the transaction cannot survive (abort
    it: :meth:`abort`).
    """

    __slots__ = ("dead", "id", "on_dead", "open", "producer")

    def __init__(self, producer: Producer, transactional_id: str, on_dead: Callable[[], None]):
        self.producer = producer
        self.id = transactional_id
        self.on_dead = on_dead
        self.open = False
        self.dead = False

    def init(self) -> None:
        """Fence older instances with this id; abort what they left open."""
        self._call(self.producer.init_transactions, TIMEOUT)

    def begin(self) -> None:
        self._call(self.producer.begin_transaction)
        self.open = True

    def send_offsets(self, offsets: Sequence[TopicPartition], group_metadata: object) -> None:
        """Commit ``offsets`` (with their metadata) for the group, with the transaction."""
        self._call(self.producer.send_offsets_to_transaction, offsets, group_metadata, TIMEOUT)

    def commit(self) -> None:
        self._call(self.producer.commit_transaction, TIMEOUT)
        self.open = False

    def abort(self) -> None:
        self._call(self.producer.abort_transaction, TIMEOUT)
        self.open = False

    def produce(  # noqa: PLR0917 - one record's fields
        self,
        topic: str,
        value: object,
        key: object,
        partition: int,
        headers: HeaderTypes,
        timestamp: int = 0,
    ) -> None:
        """One record into the open transaction (reports served while the queue is full).
        Raises what :meth:`kheaders.Producer.produce` raises for a record it refuses."""
        producer = self.producer
        while True:
            try:
                producer.produce(
                    topic, value, key, partition=partition, timestamp=timestamp, headers=headers
                )
                return
            except BufferError:
                producer.poll(0.1)

    def _call(self, call: Callable[..., Any], *args: Any) -> None:
        for tried in range(1, TRIES + 1):
            try:
                call(*args)
                return
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                if not isinstance(err, KafkaError):
                    raise
                if err.fatal() or err.code() in FENCED:
                    raise self._dead(err) from exc
                if tried == TRIES or not err.retriable() or err.txn_requires_abort():
                    raise
                log.info("processing.transaction_retry", call=call.__name__, error=err.str())

    def _dead(self, err: KafkaError) -> ProcessingError:
        self.dead = True
        self.open = False
        self.on_dead()
        if err.code() in FENCED:
            return ProcessingError(
                f"fenced: another producer started with transactional_id {self.id!r} (a"
                f" second instance, or this one's replacement); this one stops and commits"
                f" nothing more ({err.str()})"
            )
        return ProcessingError(
            f"the transactional producer ({self.id!r}) failed for good: {err.str()}"
        )
