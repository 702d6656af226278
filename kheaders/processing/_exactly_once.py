"""ExactlyOnceProcessor: consume, handle, produce and commit in one Kafka transaction.

A driver of the processing engine (:mod:`._engine`, :mod:`._steps`) as the sync
:class:`~kheaders.processing.Processor` is, and built on it: every decision is the engine's;
what differs is how three steps are carried out.

* A batch is one transaction: begun after the read, the engine's steps for the read
  carried out inside it, then the offsets the engine says may be committed
  (``engine.offsets.to_commit()``) sent with ``send_offsets_to_transaction`` and the
  transaction committed. The engine's own commit timer is off (nothing is committed
  outside a transaction).
* ``Publish``: produced into the open transaction and reported ``Acknowledged`` at once,
  so the failed record settles in the batch whose offsets carry it; the transaction makes
  the publication and the offset one (a publication reported only once the transaction
  committed would settle its record a batch late: a crash in between would publish it
  twice).
* The handler's outputs (:func:`~kheaders.processing.emit`) are sent once it returned;
  an output the producer refuses aborts the batch.

An abort (an abortable error from the producer, a refused output) rewinds: the engine is
told the assigned partitions are ``Lost`` (forgetting what it noted beyond the committed
offsets) and ``Assigned`` again with their committed offsets, paused partitions are resumed
and every partition sought back, so the batch is read and handled again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from confluent_kafka import KafkaException, Message, TopicPartition

from kheaders._client.consumer import Consumer
from kheaders._client.producer import Producer
from kheaders._errors import DeserializationError, ProcessingError
from kheaders.deadletter._exceptions import describe_error
from kheaders.processing import _options
from kheaders.processing._base import (
    COMMITTED_TIMEOUT,
    Handler,
    ProcessorBase,
    now_ms,
    partitions_of,
)
from kheaders.processing._core import Core
from kheaders.processing._exactly_once_setup import DEFAULT_TXN_TIMEOUT_MS, checked_configs
from kheaders.processing._observe import log
from kheaders.processing._options import GroupOptions
from kheaders.processing._outputs import Output, Outputs
from kheaders.processing._processor import Processor
from kheaders.processing._steps import (
    Acknowledged,
    Assigned,
    Closing,
    Commit,
    Committed,
    Lost,
    Polled,
    Publish,
    Revoked,
    Tick,
    Unreadable,
)
from kheaders.processing._transactions import Transactions

MAX_ABORTS = 3
"""Transactions aborted in a row (each batch handled again from its committed offsets)
before ``run()`` gives up with ProcessingError: an error that outlives three tries (a record
the broker refuses, a topic this client may not write) does not go away by itself."""
ABORT_PAUSE = 0.5
"""Seconds waited after the n-th abort in a row, times n, before the batch is read again."""


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

    OPTIONS = _options.GROUP

    def __init__(
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: Handler | None = None,
        *,
        transactional_id: str,
        **options: Unpack[GroupOptions],
    ) -> None:
        consumer, producer = checked_configs(
            transactional_id, config, options.get("producer_config")
        )
        ProcessorBase.__init__(
            self, consumer, topics, handler, {**options, "producer_config": producer}
        )
        self.transactional_id = transactional_id
        self._producer_config["transactional.id"] = transactional_id
        self._outputs = Outputs()
        core = self._core
        if core.handler is not None:
            core.handler = self._emitting(core.handler)
        core.routes = {value: self._emitting(h) for value, h in core.routes.items()}
        self._txn: Transactions | None = None
        self._refused: BaseException | None = None
        """Set when an output could not be put in the transaction: the batch is aborted."""
        self._aborts = 0
        self._first_seen: dict[tuple[str, int], int] = {}
        """Per partition, the first offset read since it was assigned (where an abort
        rewinds to when the partition has no committed offset yet)."""

    def _make_core(self, opts: Mapping[str, Any], config: Mapping[str, object]) -> Core:
        """The rules; in-place attempts run inside the batch's open transaction too."""
        retry = opts["retry"]
        if retry is not None:
            timeout, why = (
                "transaction.timeout.ms",
                ": the attempts run inside the batch's transaction",
            )
            retry.check_in_place(opts["producer_config"], timeout, DEFAULT_TXN_TIMEOUT_MS, why)
        return super()._make_core(opts, config)

    # -- run ---------------------------------------------------------------------------------

    def run(self) -> None:
        """Process until stopped, a batch per transaction; close the clients.

        Raises ProcessingError for a failure with nowhere to go, a handler slower than
        ``max.poll.interval.ms``, a producer fenced by another instance with the same
        ``transactional_id``, or :data:`MAX_ABORTS` aborted transactions in a row;
        BrokerUnavailableError when the cluster cannot be reached at start.
        """
        with self._running():
            self._prepare_topics()
            producer = self._producer = Producer(self._producer_config)
            txn = self._txn = Transactions(producer, self.transactional_id, self.stop)
            consumer: Consumer | None = None
            try:
                txn.init()
                consumer = self._consumer = Consumer(self._consumer_config)
                self._serve(consumer, lambda: self._batches(consumer, txn))
            finally:
                self._close(consumer, txn)
            if self._error is not None:
                raise self._error

    def _batches(self, consumer: Consumer, txn: Transactions) -> None:
        engine, first_seen, producer = self._engine, self._first_seen, txn.producer
        while not self._stop.is_set():
            producer.poll(0)
            unreadable: DeserializationError | None = None
            try:
                msgs = consumer.consume(self.batch_size, engine.wait(self.poll_timeout, now_ms()))
            except DeserializationError as exc:  # unreadable headers: never retried
                msgs, unreadable = [], exc
            now = now_ms()
            due = engine.send(Tick(now))  # resumes, records handled again: in the batch
            if not (msgs or due or unreadable):
                continue
            for msg in msgs:
                tp = (msg.topic() or "", msg.partition() or 0)
                if tp not in first_seen and msg.error() is None:
                    first_seen[tp] = msg.offset() or 0
            txn.begin()
            try:
                if unreadable is not None:
                    self._carry(engine.send(Unreadable(unreadable, now)))
                self._carry(due)
                if msgs:
                    self._carry(engine.send(Polled(msgs, now)))
                self._end(consumer, txn)
            except KafkaException as exc:
                self._abort(consumer, txn, exc)

    def _end(self, consumer: Consumer, txn: Transactions) -> None:
        """Commit the batch's transaction with the offsets the engine allows (abort it when
        an output was refused)."""
        if self._refused is not None:
            self._abort(consumer, txn, self._refused)
            return
        offsets = self._engine.offsets.to_commit()
        if offsets:
            txn.send_offsets(offsets, consumer.consumer_group_metadata())
        txn.commit()
        self._aborts = 0
        if offsets:
            self._engine.send(Committed(offsets))

    # -- steps carried out differently ---------------------------------------------------------

    def _emitting(self, handler: Handler) -> Handler:
        """``handler`` with its outputs: collected while it runs, sent into the transaction
        once it returned (an attempt that raised sends none)."""
        outputs = self._outputs

        def with_outputs(msg: Message) -> Any:
            outputs.begin()
            try:
                result = handler(msg)
            finally:
                taken = outputs.end()
            if taken and self._refused is None:
                self._send(taken)
            return result

        return with_outputs

    def _send(self, taken: list[Output]) -> None:
        txn = self._txn
        assert txn is not None
        try:
            for out in taken:
                txn.produce(out.topic, out.value, out.key, out.partition, out.headers)
        except Exception as exc:  # refused before sending: the batch cannot commit as is
            if self._refused is None:
                self._refused = exc

    def _publish(self, step: Publish) -> None:
        """Into the transaction; settled at once (it commits with its offset or neither
        does). Refused before sending (a header limit, a size): handled again later."""
        txn = self._txn
        assert txn is not None
        try:
            txn.produce(
                step.topic, step.value, step.key, step.partition, step.headers, step.timestamp
            )
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}"
            self._carry(self._engine.send(Acknowledged(step, why, now_ms())))
            return
        self._carry(self._engine.send(Acknowledged(step, None, now_ms())))

    def _commit(self, step: Commit) -> None:
        """A Commit the engine asks for outside a batch (at a revoke or at close: normally
        nothing is left, each batch committed its offsets): a transaction of its own."""
        txn, consumer = self._txn, self._consumer
        assert txn is not None
        assert consumer is not None
        try:
            txn.begin()
            txn.send_offsets(step.offsets, consumer.consumer_group_metadata())
            txn.commit()
        except KafkaException as exc:
            log.warning("processing.commit_failed", error=str(exc))
            txn.abort()
            return
        self._engine.send(Committed(step.offsets))

    def _abort(self, consumer: Consumer, txn: Transactions, exc: BaseException) -> None:
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
        txn.abort()
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
        in this run, without one); the engine forgets what it noted beyond."""
        engine = self._engine
        assigned = [TopicPartition(tp.topic, tp.partition) for tp in consumer.assignment()]
        paused = [TopicPartition(t, p) for t, p in engine.paused]
        if paused:
            consumer.resume(paused)
        first_seen = dict(self._first_seen)
        engine.send(Lost(partitions_of(assigned)))
        try:
            committed = consumer.committed(assigned, timeout=COMMITTED_TIMEOUT)
        except KafkaException as exc:
            raise ProcessingError(
                f"the committed offsets could not be read after an abort: {exc}"
            ) from exc
        engine.send(Assigned(committed))
        for tp in committed:
            offset = tp.offset if tp.offset >= 0 else first_seen.get((tp.topic, tp.partition))
            if offset is not None:
                consumer.seek(TopicPartition(tp.topic, tp.partition, offset))

    # -- rebalances and stop -----------------------------------------------------------------

    def _on_revoke(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        """No transaction is open while the consumer polls: nothing to wait for."""
        revoked = partitions_of(partitions)
        for tp in revoked:
            self._first_seen.pop(tp, None)
        self._carry(self._engine.send(Revoked(revoked)))

    def _close(self, consumer: Consumer | None, txn: Transactions) -> None:
        """Abort what an error left open, commit what the engine still allows, close."""
        if not txn.dead:
            try:
                if txn.open:
                    txn.abort()
                if consumer is not None:
                    self._carry(self._engine.send(Closing(0, now_ms())))
            except (KafkaException, ProcessingError) as exc:
                log.warning("processing.close_failed", error=describe_error(exc))
        if consumer is not None:
            try:
                consumer.close()
            except Exception as exc:  # closing: what is not committed is read again
                log.warning("processing.close_failed", error=describe_error(exc))
        try:
            txn.producer.purge()
            txn.producer.close(0)
        except KafkaException as exc:  # a fenced producer refuses even to flush
            log.info("processing.producer_closed", error=describe_error(exc))
