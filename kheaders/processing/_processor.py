"""Processor: a consumer service loop with non-blocking retries, dead letters and
at-least-once commits, on kheaders' Consumer and Producer."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition

from kheaders._client.consumer import Consumer
from kheaders._client.producer import Producer
from kheaders._errors import DeserializationError, HeldFailuresError, ProcessingError
from kheaders.processing import _observe
from kheaders.processing._commits import Offsets
from kheaders.processing._core import DEAD_LETTER, Core, HeadersFilter, Hop
from kheaders.processing._observe import Observer, log
from kheaders.processing._pause import Paused
from kheaders.processing._retry import DeadLetter, RetryTopics
from kheaders.processing._setup import consumer_parts, prepare_topics
from kheaders.processing._setup import producer_config as _producer_config_for

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

Handler = Callable[[Message], object]
Partition = tuple[str, int]


@contextmanager
def stop_on_signals(stop: Callable[[], None], enabled: bool) -> Iterator[None]:
    """SIGTERM and SIGINT call ``stop`` while inside, when ``enabled`` and on the main thread
    (the only thread Python delivers signals to); the previous handlers come back after."""
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, lambda *_: stop())
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class Processor:
    """Reads ``topics`` (and their retry topics) for a consumer group and calls
    ``handler(msg)`` once per record, in partition order; returning means handled, raising
    means failed: the record goes to its next retry topic or its dead-letter topic (see
    docs/processing.md for the headers), while its partition goes on.

    ``config`` is a kheaders Consumer config (``group.id`` required; interceptors and
    deserializers as for :class:`kheaders.Consumer`; deserializers run after ``filter`` and
    routing, and the consumed bytes are what gets republished). Its connection settings
    (``bootstrap.servers``, ``security.*``, ``ssl.*``, ``sasl.*``, ...) also build the
    producer that republishes failures; ``producer_config`` adds to or overrides those.

    A record's offset is committed once its handler returned or its failure was
    acknowledged by the broker; every ``commit_interval`` seconds, on revoke and on stop.
    ``run()`` blocks until ``stop()`` (any thread) or, in the main thread, SIGTERM/SIGINT
    (``handle_signals=False`` to leave signals alone). Without ``retry`` and
    ``dead_letter``, a failure stops ``run()`` with ProcessingError (nothing committed past
    the record). A handler that runs longer than ``max.poll.interval.ms`` is not hidden:
    librdkafka leaves the group and ``run()`` raises ProcessingError.

    Raises ConfigurationError for a bad option or setting (naming it).
    """

    def __init__(  # noqa: PLR0913 - every option is keyword-only and optional
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: Handler | None = None,
        *,
        retry: RetryTopics | None = None,
        dead_letter: DeadLetter | None = None,
        filter: HeadersFilter | None = None,  # noqa: A002 - Spring's name for it
        route_by: str | None = None,
        handlers: Mapping[str | bytes, Handler] | None = None,
        producer_config: Mapping[str, object] | None = None,
        commit_interval: float = 1.0,
        poll_timeout: float = 0.5,
        batch_size: int = 500,
        shutdown_timeout: float = 10.0,
        handle_signals: bool = True,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        consumer_config, key_de, value_de = consumer_parts(config)
        group = str(consumer_config["group.id"])
        self._core = Core(
            topics,
            handler,
            handlers=handlers,
            route_by=route_by,
            filter=filter,
            retry=retry,
            dead_letter=dead_letter,
            key_de=key_de,
            value_de=value_de,
            group=group,
        )
        self._config = dict(config)
        self._consumer_config = consumer_config
        self._producer_config = _producer_config_for(config, producer_config)
        self._observer = Observer(group, tracer_provider, meter_provider)
        self._offsets = Offsets()
        self._paused = Paused()
        self._rewinds: dict[Partition, int] = {}
        self._stop = threading.Event()
        self.commit_interval = commit_interval
        self.poll_timeout = poll_timeout
        self.batch_size = batch_size
        self.shutdown_timeout = shutdown_timeout
        self.handle_signals = handle_signals
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def stop(self) -> None:
        """Ask ``run()`` to finish the record in hand, commit and return (any thread)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        """Whether ``stop()`` was called (or a signal arrived)."""
        return self._stop.is_set()

    def run(self) -> None:
        """Process until stopped; commit what was handled; close the clients.

        Raises ProcessingError for a failure with nowhere to go or a handler slower than
        ``max.poll.interval.ms``; KafkaException when the cluster cannot be reached at start.
        """
        core = self._core
        main_topics = [t for t, main in core.main_of.items() if t == main]
        create = core.retry is None or core.retry.create_topics
        core.partitions = prepare_topics(
            self._config, {m: core.targets(m) for m in main_topics}, create=create
        )
        self._producer = Producer(self._producer_config)
        self._consumer = Consumer(self._consumer_config)
        try:
            self._consumer.subscribe(
                core.all_topics(), on_revoke=self._on_revoke, on_lost=self._on_lost
            )
            with stop_on_signals(self.stop, self.handle_signals):
                self._loop(self._consumer, self._producer)
        finally:
            self._shutdown(self._consumer, self._producer)

    def _loop(self, consumer: Consumer, producer: Producer) -> None:
        last_commit = time.monotonic()
        while not self._stop.is_set():
            producer.poll(0)
            if self._rewinds:
                self._rewind(consumer)
            if self._paused:
                resume = self._paused.due()
                if resume:
                    consumer.resume(resume)
            if time.monotonic() - last_commit >= self.commit_interval:
                self._commit(consumer, asynchronous=True)
                last_commit = time.monotonic()
            try:
                msgs = consumer.consume(self.batch_size, self._paused.wait(self.poll_timeout))
            except DeserializationError as exc:  # unreadable headers: never retried
                self._failed(exc.message, exc, 1)
                continue
            if msgs:
                self._batch(msgs)

    def _batch(self, msgs: list[Message]) -> None:
        core = self._core
        settled = self._offsets.settled_now
        fast = core.plain and not self._observer.refresh()
        retry_topics = core.retry_topics
        paused = self._paused
        handler = core.handler
        stop = self._stop
        for msg in msgs:
            if stop.is_set():
                return
            if msg.error() is not None:
                self._event(msg)
                continue
            topic = msg.topic()
            if paused and (topic, msg.partition()) in paused:
                continue  # read before its partition was paused: read again once due
            if fast and topic not in retry_topics:
                try:
                    handler(msg)  # type: ignore[misc]
                except Exception as exc:  # noqa: BLE001 - the handler's failure is the record's
                    self._failed(msg, exc, 1)
                else:
                    settled((topic, msg.partition()), msg.offset())  # type: ignore[arg-type]
            else:
                self._one(msg)

    def _one(self, msg: Message) -> None:
        """One record through every rule: due time, filter, route, deserialize, handle."""
        core = self._core
        topic, partition, offset = msg.topic() or "", msg.partition() or 0, msg.offset() or 0
        tp = (topic, partition)
        due = core.due_ms(msg)
        if due is not None:
            self._hold(tp, offset, due)
            return
        if not core.accepts(msg):
            self._offsets.settled_now(tp, offset)
            return
        attempt = core.attempt(msg)
        handler = core.handler_for(msg)
        observer = self._observer
        raw = (msg.key(), msg.value())  # the consumed bytes, republished on failure
        try:
            if handler is None:
                raise ProcessingError(
                    f"no handler for the record at {topic}[{partition}]@{offset}:"
                    f" {core.route_by!r} matches no route and there is no default"
                )
            core.deserialize(msg)
            if observer.active:
                with observer.processing(topic, partition, offset, attempt, msg.headers()):  # type: ignore[arg-type]
                    self._call(handler, msg)
            else:
                self._call(handler, msg)
        except Exception as exc:  # noqa: BLE001 - the handler's failure is the record's
            self._failed(msg, exc, attempt, raw)
        else:
            self._offsets.settled_now(tp, offset)

    def _call(self, handler: Handler, msg: Message) -> None:
        """The handler, with the quick in-place attempts ``retry.in_place`` allows."""
        retry = self._core.retry
        quick = retry.in_place if retry is not None else 0
        for left in range(quick, -1, -1):
            try:
                handler(msg)
                return
            except Exception as exc:
                if not left or (retry is not None and not retry.retryable(exc)):
                    raise
                log.info(
                    "processing.retry_in_place",
                    topic=msg.topic(),
                    partition=msg.partition(),
                    offset=msg.offset(),
                    left=left,
                    error=type(exc).__qualname__,
                )
                if retry is not None and retry.in_place_delay:
                    self._stop.wait(retry.in_place_delay)

    def _hold(self, tp: Partition, offset: int, due_ms: int) -> None:
        consumer = self._consumer
        assert consumer is not None
        target = TopicPartition(tp[0], tp[1])
        consumer.pause([target])
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
        deserialized), or raise ProcessingError when it has nowhere to go."""
        topic, partition, offset = msg.topic() or "", msg.partition() or 0, msg.offset() or 0
        self._observer.count(_observe.FAILURES, topic)
        hop = self._core.hop(msg, error, attempt)
        log.warning(
            "processing.failed",
            topic=topic,
            partition=partition,
            offset=offset,
            attempt=attempt,
            error=type(error).__qualname__,
            to=None if hop is None else hop.topic,
        )
        if hop is None:
            self._stop.set()
            raise ProcessingError(
                f"the record at {topic}[{partition}]@{offset} failed and there is no retry"
                f" or dead-letter topic: {type(error).__qualname__}"
            ) from error
        self._offsets.start((topic, partition), offset)
        self._publish(msg, hop, (topic, partition), offset, raw or (msg.key(), msg.value()))

    def _publish(
        self, msg: Message, hop: Hop, tp: Partition, offset: int, raw: tuple[object, object]
    ) -> None:
        producer = self._producer
        assert producer is not None
        ts_type, ts = msg.timestamp()
        report = self._reporter(hop, tp, offset, msg.topic() or "")
        while True:
            try:
                producer.produce(
                    hop.topic,
                    value=raw[1],
                    key=raw[0],
                    partition=hop.partition,
                    timestamp=ts if ts_type else 0,
                    headers=hop.headers,
                    on_delivery=report,
                )
                return
            except BufferError:  # the queue is full: serve reports, then try again
                producer.poll(0.1)

    def _reporter(
        self, hop: Hop, tp: Partition, offset: int, source: str
    ) -> Callable[[KafkaError | None, Message], None]:
        def report(err: KafkaError | None, _msg: Message) -> None:
            if err is None:
                self._offsets.settle(tp, offset)
                name = _observe.DEAD_LETTERS if hop.kind == DEAD_LETTER else _observe.RETRIES
                self._observer.count(name, source)
                return
            self._observer.count(_observe.PUBLISH_FAILURES, source)
            log.error(
                "processing.publish_failed",
                topic=tp[0],
                partition=tp[1],
                offset=offset,
                to=hop.topic,
                error=err.str(),
            )
            self._rewinds[tp] = min(offset, self._rewinds.get(tp, offset))

        return report

    def _rewind(self, consumer: Consumer) -> None:
        """Read again from each record whose failure could not be published."""
        rewinds, self._rewinds = self._rewinds, {}
        for tp, offset in rewinds.items():
            self._offsets.rewind(tp, offset)
            self._paused.forget({tp})
            try:
                consumer.resume([TopicPartition(*tp)])
                consumer.seek(TopicPartition(tp[0], tp[1], offset))
            except KafkaException as exc:  # no longer assigned: its new owner reads it
                log.info("processing.rewind_skipped", topic=tp[0], partition=tp[1], error=str(exc))

    def _event(self, msg: Message) -> None:
        err = msg.error()
        assert err is not None
        if err.code() == KafkaError._MAX_POLL_EXCEEDED:  # noqa: SLF001 - librdkafka's code
            self._stop.set()
            raise ProcessingError(
                "a handler ran longer than max.poll.interval.ms: the consumer left its group"
                " (raise max.poll.interval.ms, or make the handler faster)"
            )
        if err.code() != KafkaError._PARTITION_EOF:  # noqa: SLF001
            log.warning("processing.consumer_error", error=err.str())

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

    def _on_revoke(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        revoked = {(tp.topic, tp.partition) for tp in partitions}
        if self._producer is not None:
            self._producer.flush(min(self.shutdown_timeout, 5.0))
        self._commit(consumer, asynchronous=False, only=revoked)
        self._forget(revoked)

    def _on_lost(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self._forget({(tp.topic, tp.partition) for tp in partitions})

    def _forget(self, partitions: set[Partition]) -> None:
        self._offsets.forget(partitions)
        self._paused.forget(partitions)
        for tp in partitions:
            self._rewinds.pop(tp, None)

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
