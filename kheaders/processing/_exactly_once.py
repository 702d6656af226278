"""ExactlyOnceProcessor: consume, handle, produce and commit in one Kafka transaction.

One transaction per consumed batch: the handler's outputs (:func:`emit`), the retry and
dead-letter publications of the batch's failures and the batch's consumed offsets go to the
broker together, or not at all. A ``read_committed`` reader downstream sees each output once,
across a kill -9 and a restart with the same ``transactional_id`` (the restart's
``init_transactions`` aborts what the killed run left open; its offsets were never
committed, so its records are handled again and their outputs written again, once).

The per-record rules (filter, route, deserialize, due times, in-place attempts, where a
failure goes) are the at-least-once :class:`~kheaders.processing.Processor`'s; only what is
carried out differs: publications need no acknowledgement before their record is settled
(the transaction commits them with its offset), and offsets go through the producer
(``send_offsets_to_transaction``), never ``Consumer.commit``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition

from kheaders._client.consumer import Consumer
from kheaders._client.producer import Producer
from kheaders._errors import DeserializationError, ProcessingError
from kheaders._model.headers import HeaderTypes
from kheaders.processing._base import COMMITTED_TIMEOUT, Abandoned, Handler, stop_on_signals
from kheaders.processing._core import HeadersFilter
from kheaders.processing._delivery import RUNNING
from kheaders.processing._exactly_once_setup import check_in_place_fits, checked_configs
from kheaders.processing._failure import describe_error
from kheaders.processing._observe import log
from kheaders.processing._outputs import Outputs
from kheaders.processing._processor import Processor
from kheaders.processing._retry import DeadLetter, RetryTopics

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

TXN_TIMEOUT = 30.0
"""Seconds each transactional call (init, send offsets, commit, abort) may take."""
MAX_ABORTS = 3
"""Transactions aborted in a row (each batch handled again from its committed offsets)
before ``run()`` gives up with ProcessingError: an error that outlives three tries (a record
the broker refuses, a topic this client may not write) does not go away by itself."""
ABORT_PAUSE = 0.5
"""Seconds waited after the n-th abort in a row, times n, before the batch is read again."""


def _fatal(err: KafkaError) -> bool:
    return bool(err.fatal()) or err.code() in {
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
        KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    }


def _error_of(exc: KafkaException) -> KafkaError | None:
    err = exc.args[0] if exc.args else None
    return err if isinstance(err, KafkaError) else None


class ExactlyOnceProcessor(Processor):
    """A :class:`~kheaders.processing.Processor` whose every batch is one Kafka transaction:
    the outputs the handler gives :func:`emit`, the batch's retry and dead-letter records
    and its consumed offsets are committed together or aborted together.

    ``transactional_id`` names this instance: the same on every restart of it, different
    for every instance running at the same time (``orders-eos-0``, ``orders-eos-1``, ...).
    A restart aborts what the previous run left open; a second instance started with the
    same id fences the first, whose ``run()`` then stops with ProcessingError saying so.

    The consumer reads ``read_committed``; the producer is idempotent with ``acks=all``.
    A batch is handled in order as the at-least-once Processor handles it (in-place attempts
    run inside the open transaction: only the outputs of the attempt that returned are
    sent). An error that aborts the transaction (a record the broker refused, a rebalance
    that took the group's generation away) rewinds every partition to its committed offset
    and handles the batch again; after :data:`MAX_ABORTS` aborts in a row ``run()`` raises
    ProcessingError. Takes the Processor's arguments except ``commit_interval`` (a
    transaction commits each batch).

    Raises ConfigurationError naming the argument: ``transactional_id`` not a non-empty str,
    ``transactional.id`` in ``config`` or ``producer_config``, ``isolation.level`` other than
    ``read_committed``, ``enable.idempotence`` off or ``acks`` not ``all`` in
    ``producer_config``, in-place attempts longer than half ``transaction.timeout.ms``, and
    everything the Processor refuses.
    """

    def __init__(
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: Handler | None = None,
        *,
        transactional_id: str,
        retry: RetryTopics | None = None,
        dead_letter: DeadLetter | bool | None = None,
        filter: HeadersFilter | None = None,
        route_by: str | None = None,
        handlers: Mapping[str | bytes, Handler] | None = None,
        producer_config: Mapping[str, object] | None = None,
        poll_timeout: float = 0.5,
        batch_size: int = 500,
        shutdown_timeout: float = 10.0,
        handle_signals: bool = True,
        keep_timestamps: bool = False,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        consumer_config, overrides = checked_configs(transactional_id, config, producer_config)
        super().__init__(
            consumer_config,
            topics,
            handler,
            retry=retry,
            dead_letter=dead_letter,
            filter=filter,
            route_by=route_by,
            handlers=handlers,
            producer_config=overrides,
            poll_timeout=poll_timeout,
            batch_size=batch_size,
            shutdown_timeout=shutdown_timeout,
            handle_signals=handle_signals,
            keep_timestamps=keep_timestamps,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
        )
        check_in_place_fits(self._core.retry, self._producer_config)
        self.transactional_id = transactional_id
        self._producer_config["transactional.id"] = transactional_id
        self._outputs = Outputs()
        self._in_place = bool(self._core.retry is not None and self._core.retry.in_place)
        self._refused: BaseException | None = None
        """Set when an output could not be put in the transaction: the batch is aborted."""
        self._aborts = 0
        self._first_seen: dict[tuple[str, int], int] = {}
        """Per partition, the first offset read since it was assigned (where an abort
        rewinds to when the partition has no committed offset yet)."""

    # -- run ---------------------------------------------------------------------------------

    def run(self) -> None:
        """Process until stopped, a batch per transaction; close the clients.

        Raises ProcessingError for a failure with nowhere to go, a handler slower than
        ``max.poll.interval.ms``, a producer fenced by another instance with the same
        ``transactional_id``, or :data:`MAX_ABORTS` aborted transactions in a row;
        BrokerUnavailableError when the cluster cannot be reached at start.
        """
        self._prepare_topics()
        producer = self._producer = Producer(self._producer_config)
        consumer: Consumer | None = None
        try:
            self._transactional(producer.init_transactions, TXN_TIMEOUT)
            consumer = self._consumer = Consumer(self._consumer_config)
            consumer.subscribe(
                self._core.all_topics(),
                on_assign=self._on_assign,
                on_revoke=self._on_revoke,
                on_lost=self._on_lost,
            )
            running = RUNNING.set(self)
            try:
                with stop_on_signals(self.stop, self.handle_signals):
                    self._loop(consumer, producer)
            finally:
                RUNNING.reset(running)
        finally:
            self._close(consumer, producer)

    def _loop(self, consumer: Consumer, producer: Producer) -> None:
        while not self._stop.is_set():
            producer.poll(0)
            if self._paused:
                resume = self._paused.due()
                if resume:
                    consumer.resume(resume)
            wait = self._paused.wait(self.poll_timeout)
            if self._again:
                wait = min(wait, 0.1)
            unreadable: DeserializationError | None = None
            try:
                msgs = consumer.consume(self.batch_size, wait)
            except DeserializationError as exc:  # unreadable headers: never retried
                msgs, unreadable = [], exc
            again = self._due_again()
            if msgs or again or unreadable is not None:
                self._transaction(consumer, producer, msgs, again, unreadable)

    def _transaction(
        self,
        consumer: Consumer,
        producer: Producer,
        msgs: list[Message],
        again: list[tuple[Message, int]],
        unreadable: DeserializationError | None,
    ) -> None:
        """One batch in one transaction: handled, its offsets sent, committed; aborted and
        rewound on an abortable error."""
        first_seen = self._first_seen
        for msg in msgs:
            tp = (msg.topic() or "", msg.partition() or 0)
            if tp not in first_seen and msg.error() is None:
                first_seen[tp] = msg.offset() or 0
        self._transactional(producer.begin_transaction)
        stopped: BaseException | None = None
        try:
            if unreadable is not None:
                self._failed(unreadable.message, unreadable, 1)
            for msg, attempt in again:
                self._one(msg, attempt)
            self._batch(msgs)
        except ProcessingError as exc:  # what was handled before it is still committed
            stopped = exc
        except KafkaException as exc:
            self._abort(consumer, producer, exc)
            return
        if self._refused is not None:
            self._abort(consumer, producer, self._refused)
            if stopped is not None:
                raise stopped
            return
        try:
            offsets = self._offsets.to_commit()
            if offsets:
                self._transactional(
                    producer.send_offsets_to_transaction,
                    offsets,
                    consumer.consumer_group_metadata(),
                    TXN_TIMEOUT,
                )
            self._transactional(producer.commit_transaction, TXN_TIMEOUT)
        except KafkaException as exc:
            self._abort(consumer, producer, exc)
        else:
            self._offsets.committed(offsets)
            self._aborts = 0
        if stopped is not None:
            raise stopped

    def _batch(self, msgs: list[Message]) -> None:
        """Each record through the Processor's rules; stops at an output the transaction
        could not take."""
        paused = self._paused
        for msg in msgs:
            if self._stopping or self._refused is not None:
                return
            if msg.error() is not None:
                self._event(msg)
            elif not (paused and (msg.topic(), msg.partition()) in paused):
                self._one(msg)

    def _call(self, handler: Handler, msg: Message) -> None:
        """The handler's attempts (each starting with no outputs), then the outputs of the
        one that returned, into the transaction."""
        outputs = self._outputs
        try:
            if self._in_place:
                super()._call(partial(self._attempt, handler), msg)
            else:
                outputs.begin()
                handler(msg)
        finally:
            taken = outputs.end()
        if not taken:
            return
        producer = self._producer
        assert producer is not None
        try:
            for out in taken:
                self._produce(
                    producer,
                    out.topic,
                    out.value,
                    out.key,
                    partition=out.partition,
                    headers=out.headers,
                )
        except Exception as exc:  # refused before sending: the batch cannot commit as is
            self._refused = exc
            raise Abandoned from exc  # (neither settled nor republished)

    def _attempt(self, handler: Handler, msg: Message) -> Any:
        """One in-place attempt: it starts with no outputs."""
        self._outputs.begin()
        return handler(msg)

    @staticmethod
    def _produce(
        producer: Producer,
        topic: str,
        value: object,
        key: object,
        *,
        partition: int,
        headers: HeaderTypes,
        timestamp: int = 0,
    ) -> None:
        while True:
            try:
                producer.produce(
                    topic, value, key, partition=partition, timestamp=timestamp, headers=headers
                )
                return
            except BufferError:  # the queue is full: serve reports, then try again
                producer.poll(0.1)

    def _failed(
        self,
        msg: Message,
        error: BaseException,
        attempt: int,
        raw: tuple[object, object] | None = None,
    ) -> None:
        """The failed record's retry or dead-letter record, into the transaction: settled at
        once (it commits with the offset, or neither does). Raises ProcessingError when it
        has nowhere to go."""
        hop = self._failure_hop(msg, error, attempt)
        tp = (msg.topic() or "", msg.partition() or 0)
        offset = msg.offset() or 0
        raw = raw or (msg.key(), msg.value())
        producer = self._producer
        assert producer is not None
        try:
            self._produce(
                producer,
                hop.topic,
                raw[1],
                raw[0],
                partition=hop.partition,
                headers=hop.headers,
                timestamp=self._timestamp_for(msg),
            )
        except Exception as exc:  # refused before sending (a header limit, a size)
            self._offsets.start(tp, offset)
            self._publish_failed(hop, tp, offset, f"{type(exc).__name__}: {exc}")
            self._handle_again_later(msg, raw, attempt)  # never committed meanwhile
            return
        self._offsets.settled_now(tp, offset)
        self._published(hop, tp, offset, tp[0])

    # -- transactions ------------------------------------------------------------------------

    def _transactional(self, call: Any, *args: Any) -> None:
        """A transactional call, tried again while librdkafka says it may be. Raises
        ProcessingError when the producer is fenced or failed for good; KafkaException
        otherwise (the transaction is to be aborted)."""
        for _ in range(3):
            try:
                call(*args)
                return
            except KafkaException as exc:
                err = _error_of(exc)
                if err is not None and _fatal(err):
                    raise self._fenced(err) from exc
                if err is None or not err.retriable() or err.txn_requires_abort():
                    raise
                log.info("processing.transaction_retry", call=call.__name__, error=err.str())
        call(*args)

    def _fenced(self, err: KafkaError) -> ProcessingError:
        self.stop()
        if err.code() in {
            KafkaError._FENCED,
            KafkaError.PRODUCER_FENCED,
            KafkaError.INVALID_PRODUCER_EPOCH,
        }:
            return ProcessingError(
                f"fenced: another producer started with transactional_id"
                f" {self.transactional_id!r} (a second instance, or this one's replacement);"
                f" this one stops and commits nothing more ({err.str()})"
            )
        return ProcessingError(
            f"the transactional producer ({self.transactional_id!r}) failed for good: {err.str()}"
        )

    def _abort(self, consumer: Consumer, producer: Producer, exc: BaseException) -> None:
        """Abort the open transaction and rewind to the committed offsets. Raises
        ProcessingError after :data:`MAX_ABORTS` in a row."""
        self._refused = None
        self._aborts += 1
        reason = describe_error(exc)
        log.warning(
            "processing.transaction_aborted",
            transactional_id=self.transactional_id,
            error=reason,
            in_a_row=self._aborts,
        )
        self._transactional(producer.abort_transaction, TXN_TIMEOUT)
        self._rewind(consumer)
        if self._aborts >= MAX_ABORTS:
            self.stop()
            raise ProcessingError(
                f"{self._aborts} transactions in a row aborted ({self.transactional_id!r}),"
                f" nothing committed past them; the last: {reason}"
            ) from exc
        self._stop.wait(ABORT_PAUSE * self._aborts)

    def _rewind(self, consumer: Consumer) -> None:
        """Every assigned partition back to its committed offset (or the first offset read
        in this run, without one); what was noted beyond it forgotten."""
        assigned = [(tp.topic, tp.partition) for tp in consumer.assignment()]
        paused = [TopicPartition(t, p) for t, p in assigned if (t, p) in self._paused]
        if paused:
            consumer.resume(paused)
        first_seen = dict(self._first_seen)
        self._forget(set(assigned))
        self._again.clear()
        try:
            committed = consumer.committed(
                [TopicPartition(t, p) for t, p in assigned], timeout=COMMITTED_TIMEOUT
            )
        except KafkaException as exc:
            raise ProcessingError(
                f"the committed offsets could not be read after an abort: {exc}"
            ) from exc
        self._restore(committed)
        for tp in committed:
            offset = tp.offset if tp.offset >= 0 else first_seen.get((tp.topic, tp.partition))
            if offset is not None:
                consumer.seek(TopicPartition(tp.topic, tp.partition, offset))

    # -- rebalances and stop -----------------------------------------------------------------

    def _on_revoke(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        """Nothing to commit: no transaction is open while the consumer polls."""
        self._forget({(tp.topic, tp.partition) for tp in partitions})

    def _forget(self, partitions: set[tuple[str, int]]) -> None:
        super()._forget(partitions)
        for tp in partitions:
            self._first_seen.pop(tp, None)

    def _close(self, consumer: Consumer | None, producer: Producer) -> None:
        """Close the clients: nothing is open (each batch ended its transaction); what a
        fenced producer left is the other instance's to redo."""
        if consumer is not None:
            try:
                consumer.close()
            except Exception as exc:  # closing: nothing left to lose
                log.warning("processing.close_failed", error=describe_error(exc))
        try:
            producer.purge()
            producer.close(0)
        except KafkaException as exc:  # a fenced producer refuses even to flush
            log.info("processing.producer_closed", error=describe_error(exc))
