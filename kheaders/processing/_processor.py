"""Processor: a consumer service loop with non-blocking retries, dead letters and
at-least-once commits, on kheaders' Consumer and Producer."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack

from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition

from kheaders._client.consumer import Consumer
from kheaders._client.producer import Producer
from kheaders._client.share import ShareConsumer
from kheaders._errors import DeserializationError, HeldFailuresError
from kheaders.processing import _steps as s
from kheaders.processing._base import (
    COMMITTED_TIMEOUT,
    Handler,
    ProcessorBase,
    now_ms,
    observed,
    partitions_of,
    produce,
)
from kheaders.processing._delivery import RUNNING
from kheaders.processing._observe import log
from kheaders.processing._options import ProcessorOptions


class Processor(ProcessorBase):
    """Reads ``topics`` (and their retry topics) for a consumer group and calls
    ``handler(msg)`` once per record, in partition order; returning means handled, raising
    means failed: the record goes to its next retry topic or its dead-letter topic (see
    docs/processing.md for the headers), while its partition goes on.

    ``config`` is a kheaders Consumer config (``group.id`` required; interceptors and
    deserializers as for :class:`kheaders.Consumer`; deserializers run after ``filter`` and
    routing, and the consumed bytes are what gets republished; interceptors' ``on_consume``
    sees the records before they are deserialized). Its connection settings
    (``bootstrap.servers``, ``security.*``, ``ssl.*``, ``sasl.*``, ...) also build the
    producer that republishes failures; ``producer_config`` adds to or overrides those.
    ``route_by`` names a header whose last value picks the handler in ``handlers`` (``handler``
    is the default); ``filter(headers)`` returning False skips a record (committed, never
    deserialized).

    A record's offset is committed once its handler returned or its failure was
    acknowledged by the broker; every ``commit_interval`` seconds, on revoke and on stop.
    ``run()`` blocks until ``stop()`` (any thread) or, in the main thread, SIGTERM/SIGINT
    (``handle_signals=False`` to leave signals alone). Without ``retry`` and
    ``dead_letter``, a failure stops ``run()`` with ProcessingError (nothing committed past
    the record). Retry and dead-letter records get their send time as timestamp, as
    Spring's do (the original's is in ``kafka_original-timestamp``);
    ``keep_timestamps=True`` sends them with the original's. A handler that runs longer
    than ``max.poll.interval.ms`` is not hidden: librdkafka leaves the group and ``run()``
    raises ProcessingError.

    Raises ConfigurationError for a bad option or setting (naming it).
    """

    _consumer: Consumer | None = None
    _producer: Producer | None = None

    def __init__(
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: Handler | None = None,
        **options: Unpack[ProcessorOptions],
    ) -> None:
        super().__init__(config, topics, handler, options)

    def run(self) -> None:
        """Process until stopped; commit what was handled; close the clients.

        Raises ProcessingError for a failure with nowhere to go or a handler slower than
        ``max.poll.interval.ms``; ConfigurationError naming the setting when the broker
        refuses the consumer's config (``session.timeout.ms`` out of the broker's range);
        BrokerUnavailableError (naming the bootstrap servers and the cause) when the cluster
        cannot be reached at start.
        """
        with self._running():
            self._prepare_topics()
            producer = self._producer = Producer(self._producer_config)
            consumer = self._consumer = Consumer(self._consumer_config)
            try:
                self._serve(consumer, lambda: self._loop(consumer, producer))
            finally:
                self._shutdown(consumer, producer)
            if self._error is not None:
                raise self._error

    def _serve(self, consumer: Consumer, loop: Callable[[], None]) -> None:
        """Subscribe ``consumer`` with the rebalance callbacks, then ``loop()`` as RUNNING."""
        consumer.subscribe(
            self._core.all_topics(),
            on_assign=self._on_assign,
            on_revoke=self._on_revoke,
            on_lost=self._on_lost,
        )
        running = RUNNING.set(self)
        try:
            loop()
        finally:
            RUNNING.reset(running)

    def _loop(self, consumer: Consumer, producer: Producer) -> None:
        engine, carry = self._engine, self._carry
        while not self._stop.is_set():
            producer.poll(0)
            try:
                msgs = consumer.consume(self.batch_size, engine.wait(self.poll_timeout, now_ms()))
            except DeserializationError as exc:  # unreadable headers: never retried
                carry(engine.send(s.Unreadable(exc, now_ms())))
                continue
            now = now_ms()  # committed after a read: a failure the consumer kept from the
            carry(engine.send(s.Tick(now)))  # last batch (raised by this read) is in hand first
            if msgs:
                carry(engine.send(s.Polled(msgs, now)))

    def _carry(self, steps: list[s.Step]) -> None:
        """Carry out the engine's steps, in order."""
        for step in steps:
            match step:
                case s.HandleEach():
                    self._each(step)
                case s.Handle():
                    self._handle(step)
                case s.Publish():
                    self._publish(step)
                case s.Commit():
                    self._commit(step)
                case s.Pause(partition=tp):
                    assert self._consumer is not None
                    self._consumer.pause([tp])
                    self._consumer.seek(tp)
                case s.Resume(partitions=tps):
                    assert self._consumer is not None
                    self._consumer.resume(tps)
                case s.Purge():
                    assert self._producer is not None
                    self._producer.purge()
                    self._producer.flush(0)
                case s.Stop():
                    self._stopped(step)

    def _each(self, step: s.HandleEach) -> None:
        """The short way: the handler on each record; one report for the run."""
        engine, handler, records = self._engine, step.handler, step.records
        start = 0
        for msg in records:
            if engine.stopping:  # a stopped processor starts nothing: read again next run
                records = self._left(records, records.index(msg, start))
                break
            try:
                handler(msg)
            except Exception as exc:
                i = records.index(msg, start)
                if i > start:  # the records before it first
                    engine.send(s.Handled(records[start:i]))
                start = i + 1
                self._carry(engine.send(s.Failed(step.one(msg), exc, now_ms())))
        if start < len(records):
            engine.send(s.Handled(records[start:] if start else records))

    def _left(self, records: list[Message], i: int) -> list[Message]:
        """``records[:i]``: those before ``i``, the rest left unstarted at a stop (read again
        by the next run)."""
        return records[:i]

    def _handle(self, step: s.Handle) -> None:
        engine, msg = self._engine, step.record
        if engine.stopping or (step.delay and self._stop.wait(step.delay)):
            self._left([msg], 0)  # stopped (between in-place attempts)
            return
        try:
            with observed(self._observer, step):
                step.handler(msg)
        except Exception as exc:
            self._carry(engine.send(s.Failed(step, exc, now_ms())))
        else:
            engine.send(s.Handled((msg,)))

    def _publish(self, step: s.Publish) -> None:
        engine, producer = self._engine, self._producer
        assert producer is not None

        def report(err: KafkaError | None, _sent: Message) -> None:
            self._carry(
                engine.send(s.Acknowledged(step, None if err is None else err.str(), now_ms()))
            )

        while True:
            try:
                produce(producer, step, report)
                return
            except BufferError:  # the queue is full: serve reports, then try again
                producer.poll(0.1)
            except Exception as exc:  # refused before sending (a header limit, a size)
                why = f"{type(exc).__name__}: {exc}"
                self._carry(engine.send(s.Acknowledged(step, why, now_ms())))
                return

    def _commit(self, step: s.Commit) -> None:
        assert self._consumer is not None
        try:
            self._consumer.commit(offsets=step.offsets, asynchronous=not step.sync)
        except KafkaException as exc:
            log.warning("processing.commit_failed", error=str(exc))
            return
        self._engine.send(s.Committed(step.offsets))

    def _on_assign(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        try:
            committed = consumer.committed(partitions, timeout=COMMITTED_TIMEOUT)
        except KafkaException as exc:  # nothing skipped: handled again, at least once
            log.warning("processing.committed_unknown", error=str(exc))
            return
        self._engine.send(s.Assigned(committed))

    def _on_revoke(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        if self._producer is not None:
            self._producer.flush(min(self.shutdown_timeout, 5.0))
        self._carry(self._engine.send(s.Revoked(partitions_of(partitions))))

    def _on_lost(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self._engine.send(s.Lost(partitions_of(partitions)))

    def _shutdown(self, consumer: Consumer | ShareConsumer, producer: Producer) -> None:
        left = producer.flush(self.shutdown_timeout)
        self._carry(self._engine.send(s.Closing(left, now_ms())))
        try:
            consumer.close()
        except HeldFailuresError as exc:  # not committed: read again by the next run
            log.warning("processing.failures_left_at_close", records=len(exc.exceptions))
        producer.close(self.shutdown_timeout)
