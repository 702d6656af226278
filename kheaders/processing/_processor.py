"""Processor: a consumer service loop with non-blocking retries, dead letters and
at-least-once commits, on kheaders' Consumer and Producer."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition

from kheaders._client.consumer import Consumer
from kheaders._client.producer import Producer
from kheaders._errors import DeserializationError, HeldFailuresError
from kheaders.processing._base import (
    COMMITTED_TIMEOUT,
    Abandoned,
    Handler,
    Partition,
    ProcessorBase,
    stop_on_signals,
)
from kheaders.processing._core import Hop
from kheaders.processing._delivery import RUNNING
from kheaders.processing._observe import log


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

    def run(self) -> None:
        """Process until stopped; commit what was handled; close the clients.

        Raises ProcessingError for a failure with nowhere to go or a handler slower than
        ``max.poll.interval.ms``; KafkaException when the cluster cannot be reached at start.
        """
        self._prepare_topics()
        producer = self._producer = Producer(self._producer_config)
        consumer = self._consumer = Consumer(self._consumer_config)
        try:
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
            self._shutdown(consumer, producer)

    def _loop(self, consumer: Consumer, producer: Producer) -> None:
        last_commit = time.monotonic()
        while not self._stop.is_set():
            producer.poll(0)
            for msg, attempt in self._due_again():
                self._one(msg, attempt)
            if self._paused:
                resume = self._paused.due()
                if resume:
                    consumer.resume(resume)
            wait = self._paused.wait(self.poll_timeout)
            if self._again:
                wait = min(wait, 0.1)
            try:
                msgs = consumer.consume(self.batch_size, wait)
            except DeserializationError as exc:  # unreadable headers: never retried
                self._failed(exc.message, exc, 1)  # (a failure the last batch kept)
                continue
            # committed here, after a read: a failure the consumer kept from the last batch
            # (raised by this read) is in hand first, so no commit passes it
            if time.monotonic() - last_commit >= self.commit_interval:
                self._commit(consumer, asynchronous=True)
                last_commit = time.monotonic()
            if msgs:
                self._batch(msgs)

    def _batch(self, msgs: list[Message]) -> None:
        """Each record of a batch, in order. Main-topic records that need nothing but their
        handler take the short way: their partition's last handled offset is noted once per
        batch (main-topic partitions are never paused: only retry topics wait)."""
        core = self._core
        settled = self._offsets.settled_now
        fast = core.plain and not self._observer.refresh() and not self._offsets.restoring
        retry_topics = core.retry_topics
        paused = self._paused
        handler = core.handler
        last: dict[tuple[str, int], int] = {}
        try:
            for msg in msgs:
                if self._stopping:
                    return
                if msg.error() is not None:
                    self._event(msg)
                    continue
                topic = msg.topic()
                if fast and topic not in retry_topics:
                    try:
                        handler(msg)  # type: ignore[misc]
                    except Exception as exc:
                        tp = (topic, msg.partition())
                        if tp in last:  # the records before it first
                            settled(tp, last.pop(tp))
                        self._failed(msg, exc, 1)
                    else:
                        last[(topic, msg.partition())] = msg.offset()  # type: ignore[index,assignment]
                elif not (paused and (topic, msg.partition()) in paused):
                    self._one(msg)  # (a record read before its partition was paused is
                    # skipped: it is read again once due)
        finally:
            for tp, offset in last.items():
                settled(tp, offset)

    def _one(self, msg: Message, attempt: int | None = None) -> None:
        """One record through every rule: due time, filter, route, deserialize, handle."""
        if self._stopping:
            return  # a stopped processor starts nothing: read again by the next run
        core = self._core
        topic, partition, offset = msg.topic() or "", msg.partition() or 0, msg.offset() or 0
        tp = (topic, partition)
        if self._done_before(tp, offset):
            return
        due = core.due_ms(msg)
        if due is not None:
            self._hold(tp, offset, due)
            return
        if not core.accepts(msg):
            self._offsets.settled_now(tp, offset)
            return
        if attempt is None:
            attempt = core.attempt(msg)
        handler = core.handler_for(msg)
        observer = self._observer
        raw = (msg.key(), msg.value())  # the consumed bytes, republished on failure
        try:
            if handler is None:
                raise self._no_handler(topic, partition, offset)
            core.deserialize(msg)
            if observer.active:
                with observer.processing(topic, partition, offset, attempt, msg.headers()):  # type: ignore[arg-type]
                    self._call(handler, msg)
            else:
                self._call(handler, msg)
        except Abandoned:
            return  # stopped between in-place attempts: neither settled nor republished
        except Exception as exc:
            self._failed(msg, exc, attempt, raw)
        else:
            self._offsets.settled_now(tp, offset)

    def _call(self, handler: Handler, msg: Message) -> None:
        """The handler, with the quick in-place attempts ``retry.in_place`` allows."""
        retry = self._core.retry
        quick = retry.in_place if retry is not None else 0
        if not quick:
            handler(msg)
            return
        try:
            for left in range(quick, -1, -1):
                self._tries[id(msg)] = quick - left
                try:
                    handler(msg)
                    return
                except Exception as exc:
                    delay = self._in_place_delay(msg, exc, left)
                    stopped = self._stop.wait(delay) if delay else self._stopping
                    if stopped:
                        raise Abandoned from exc
        finally:
            self._tries.pop(id(msg), None)

    def _hold(self, tp: Partition, offset: int, due_ms: int) -> None:
        """Pause ``tp`` and seek it back to ``offset``, read again once due."""
        consumer = self._consumer
        assert consumer is not None
        consumer.pause([TopicPartition(tp[0], tp[1])])
        consumer.seek(self._paused.hold(tp, offset, due_ms))
        log.debug("processing.paused", topic=tp[0], partition=tp[1], offset=offset, due_ms=due_ms)

    # -- failures ----------------------------------------------------------------------------

    def _failed(
        self,
        msg: Message,
        error: BaseException,
        attempt: int,
        raw: tuple[object, object] | None = None,
    ) -> None:
        """Send the failed record on (``raw``: its consumed key and value, when it was
        deserialized). Raises ProcessingError when it has nowhere to go."""
        hop = self._failure_hop(msg, error, attempt)
        tp = (msg.topic() or "", msg.partition() or 0)
        offset = msg.offset() or 0
        self._offsets.start(tp, offset)
        raw = raw or (msg.key(), msg.value())
        producer = self._producer
        assert producer is not None
        report = self._reporter(hop, msg, raw, attempt)
        while True:
            try:
                producer.produce(
                    hop.topic,
                    value=raw[1],
                    key=raw[0],
                    partition=hop.partition,
                    timestamp=self._timestamp_for(msg),
                    headers=hop.headers,
                    on_delivery=report,
                )
                return
            except BufferError:  # the queue is full: serve reports, then try again
                producer.poll(0.1)
            except Exception as exc:  # refused before sending (a header limit, a size):
                self._publish_failed(hop, tp, offset, f"{type(exc).__name__}: {exc}")
                self._handle_again_later(msg, raw, attempt)  # never committed meanwhile
                return

    def _reporter(
        self, hop: Hop, msg: Message, raw: tuple[object, object], attempt: int
    ) -> Callable[[KafkaError | None, Message], None]:
        tp = (msg.topic() or "", msg.partition() or 0)
        offset = msg.offset() or 0

        def report(err: KafkaError | None, _sent: Message) -> None:
            if err is None:
                self._published(hop, tp, offset, tp[0])
            else:
                self._publish_failed(hop, tp, offset, err.str())
                self._handle_again_later(msg, raw, attempt)

        return report

    # -- commits -----------------------------------------------------------------------------

    def _commit(
        self, consumer: Consumer, *, asynchronous: bool, only: set[Partition] | None = None
    ) -> None:
        offsets = self._offsets.to_commit(only)
        if not offsets:
            return  # nothing new: never a commit that fails for having nothing to store
        try:
            consumer.commit(offsets=offsets, asynchronous=asynchronous)
        except KafkaException as exc:
            log.warning("processing.commit_failed", error=str(exc))
            return
        self._offsets.committed(offsets)

    def _on_assign(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        try:
            self._restore(consumer.committed(partitions, timeout=COMMITTED_TIMEOUT))
        except KafkaException as exc:  # nothing skipped: handled again, at least once
            log.warning("processing.committed_unknown", error=str(exc))

    def _on_revoke(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        revoked = {(tp.topic, tp.partition) for tp in partitions}
        if self._producer is not None:
            self._producer.flush(min(self.shutdown_timeout, 5.0))
        self._commit(consumer, asynchronous=False, only=revoked)
        self._forget(revoked)

    def _on_lost(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self._forget({(tp.topic, tp.partition) for tp in partitions})

    def _shutdown(self, consumer: Consumer, producer: Producer) -> None:
        left = producer.flush(self.shutdown_timeout)
        if left:  # unacknowledged: their records stay uncommitted and are read again
            log.warning("processing.unpublished_at_stop", records=left)
            producer.purge()
            producer.flush(0)
        self._commit(consumer, asynchronous=False)
        try:
            consumer.close()
        except HeldFailuresError as exc:  # not committed: read again by the next run
            log.warning("processing.failures_left_at_close", records=len(exc.exceptions))
        producer.close(self.shutdown_timeout)
