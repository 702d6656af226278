"""What the sync and asyncio processors share: options, bookkeeping, stopping, signals."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaError, Message, TopicPartition

from kheaders._errors import ConfigurationError, KHeadersError, ProcessingError
from kheaders.deadletter import DeadLetter
from kheaders.deadletter._config import dead_letter_option
from kheaders.deadletter._exceptions import describe_error
from kheaders.processing import _observe
from kheaders.processing import _validate as _v
from kheaders.processing._commits import Offsets
from kheaders.processing._core import Core, HeadersFilter, Hop
from kheaders.processing._observe import Observer, log
from kheaders.processing._pause import Paused
from kheaders.processing._retry import RetryTopics
from kheaders.processing._setup import consumer_parts, prepare_topics
from kheaders.processing._setup import producer_config as _producer_config_for

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

Handler = Callable[[Message], Any]
Partition = tuple[str, int]
SIGNALS = (signal.SIGTERM, signal.SIGINT)
COMMITTED_TIMEOUT = 10.0
"""Seconds to wait for the committed offsets of newly assigned partitions."""
AGAIN_AFTER = 1.0
"""Seconds before a record whose failure could not be published is handled again."""


@contextmanager
def stop_on_signals(stop: Callable[[], None], enabled: bool) -> Iterator[None]:
    """SIGTERM and SIGINT call ``stop`` while inside, when ``enabled`` and on the main thread
    (the only thread Python delivers signals to); the previous handlers come back after."""
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    for sig in previous:
        signal.signal(sig, lambda *_: stop())
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class Abandoned(KHeadersError):  # noqa: N818 - not an error: a record left for the next run
    """Raised inside a processor when ``stop()`` interrupts a record's in-place retries: the
    record is neither settled nor republished, so the next run handles it again. It never
    leaves the processor (caught where the record's attempts are run); in the tree so that
    every exception kheaders defines is one."""


def _retry_option(retry: object) -> RetryTopics | None:
    """``retry=`` checked: a RetryTopics or None."""
    if retry is None or isinstance(retry, RetryTopics):
        return retry
    hint = ""
    if isinstance(retry, list | tuple):
        hint = f": write retry=RetryTopics(delays={list(retry)!r})"
    raise ConfigurationError(
        f"retry: expected RetryTopics(...) or None, got {_v.kind_of(retry)}{hint}"
    )


def _dead_letter_option(dead_letter: object) -> DeadLetter | None:
    """``dead_letter=`` checked (see :func:`kheaders.deadletter._config.dead_letter_option`)."""
    return dead_letter_option(dead_letter)


def _check_in_place(retry: RetryTopics | None, config: Mapping[str, object]) -> None:
    """Raise ConfigurationError when in-place attempts could outlast
    ``max.poll.interval.ms`` (they run on the polling thread)."""
    if retry is None or not retry.in_place:
        return
    try:
        limit = float(str(config.get("max.poll.interval.ms", 300_000))) / 1000
    except ValueError:
        return  # librdkafka names the bad value itself
    if retry.in_place * retry.in_place_delay >= limit / 2:
        raise ConfigurationError(
            f"RetryTopics: in_place={retry.in_place} x in_place_delay={retry.in_place_delay} s"
            f" must stay well below max.poll.interval.ms ({limit:g} s): use retry topics"
        )


class ProcessorBase:
    """The options and state of a processor (see :class:`kheaders.processing.Processor`)."""

    def __init__(
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: Handler | None = None,
        *,
        retry: RetryTopics | None = None,
        dead_letter: DeadLetter | str | bool | None = None,
        filter: HeadersFilter | None = None,
        route_by: str | None = None,
        handlers: Mapping[str | bytes, Handler] | None = None,
        producer_config: Mapping[str, object] | None = None,
        commit_interval: float = 1.0,
        poll_timeout: float = 0.5,
        batch_size: int = 500,
        shutdown_timeout: float = 10.0,
        handle_signals: bool = True,
        keep_timestamps: bool = False,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        _v.mapping("config", config)
        _v.topics_list(topics)
        _v.callable_or_none("handler", handler)
        _v.callable_or_none("filter", filter)
        _v.routes(route_by, handlers)
        retry = _retry_option(retry)
        dead_letter = _dead_letter_option(dead_letter)
        _v.mapping("producer_config", producer_config, optional=True)
        for name, value in (
            ("commit_interval", commit_interval),
            ("poll_timeout", poll_timeout),
            ("shutdown_timeout", shutdown_timeout),
        ):
            _v.number(name, value)
        _v.number("batch_size", batch_size, integer=True)
        _v.flag("handle_signals", handle_signals)
        _v.flag("keep_timestamps", keep_timestamps)
        _v.provider("tracer_provider", tracer_provider, "get_tracer")
        _v.provider("meter_provider", meter_provider, "get_meter")
        consumer_config, key_de, value_de = consumer_parts(config)
        _v.consumer_settings(consumer_config)
        _check_in_place(retry, consumer_config)
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
        _v.producer_settings(self._producer_config)
        self._observer = Observer(group, tracer_provider, meter_provider)
        self._offsets = Offsets()
        self._paused = Paused()
        self._stop = threading.Event()
        self._stopping = False
        """``_stop``'s flag as a plain attribute: read once per record."""
        self.commit_interval = commit_interval
        self.poll_timeout = poll_timeout
        self.batch_size = batch_size
        self.shutdown_timeout = shutdown_timeout
        self.handle_signals = handle_signals
        self.keep_timestamps = keep_timestamps
        self._tries: dict[int, int] = {}
        """``id(record)`` -> quick attempts in place made so far (only while some were)."""
        self._again: list[tuple[float, Message, tuple[object, object], int]] = []
        """Records whose failure could not be published: (when, record, raw, attempt),
        handled again then (they stay uncommitted meanwhile)."""

    def stop(self) -> None:
        """Ask ``run()`` to finish the record in hand, commit and return (any thread)."""
        self._stopping = True
        self._stop.set()

    @property
    def stopping(self) -> bool:
        """Whether ``stop()`` was called (or a signal arrived)."""
        return self._stop.is_set()

    def _timestamp_for(self, msg: Message) -> int:
        """The timestamp a retry or dead-letter record of ``msg`` is sent with: 0 (the
        producer stamps the send time, as Spring does; the original travels in
        ``kafka_original-timestamp``), or the original's with ``keep_timestamps``."""
        if not self.keep_timestamps:
            return 0
        ts_type, ts = msg.timestamp()
        return ts if ts_type else 0

    def _in_place_try(self, msg: Message) -> int:
        """Quick attempts in place already made for ``msg`` (see ``delivery()``)."""
        return self._tries.get(id(msg), 0) if self._tries else 0

    def _restore(self, committed: Sequence[TopicPartition]) -> None:
        """Newly assigned partitions: what their last commit says was settled beyond it."""
        for tp in committed:
            if tp.error is None:
                self._offsets.restore((tp.topic, tp.partition), tp.offset, tp.metadata)

    def _done_before(self, tp: Partition, offset: int) -> bool:
        """Whether a previous run settled this record (named in its commit's metadata)."""
        offsets = self._offsets
        return tp in offsets.restoring and offsets.arrived(tp, offset)

    def _no_handler(self, topic: str, partition: int, offset: int) -> ProcessingError:
        return ProcessingError(
            f"no handler for the record at {topic}[{partition}]@{offset}:"
            f" {self._core.route_by!r} matches no route and there is no default"
        )

    def _in_place_delay(self, msg: Message, error: Exception, left: int) -> float:
        """After a handler failure with ``left`` quick attempts in place still allowed: the
        seconds to wait before the next one (logged). Raises ``error`` when none is left or
        the error is not retryable."""
        retry = self._core.retry
        if not left or (retry is not None and not retry.retryable(error)):
            raise error
        log.info(
            "processing.retry_in_place",
            topic=msg.topic(),
            partition=msg.partition(),
            offset=msg.offset(),
            left=left,
            error=describe_error(error),
        )
        return retry.in_place_delay if retry is not None else 0.0

    def _failure_hop(self, msg: Message, error: BaseException, attempt: int) -> Hop:
        """Count and log the failure; the hop it takes. Raises ProcessingError (and stops)
        when it has nowhere to go."""
        topic, partition, offset = msg.topic() or "", msg.partition() or 0, msg.offset() or 0
        self._observer.count(_observe.FAILURES, topic)
        hop = self._core.hop(msg, error, attempt)
        log.warning(
            "processing.failed",
            topic=topic,
            partition=partition,
            offset=offset,
            attempt=attempt,
            error=describe_error(error),
            to=None if hop is None else hop.topic,
        )
        if hop is None:
            self.stop()
            raise ProcessingError(
                f"the record at {topic}[{partition}]@{offset} failed and there is no retry"
                f" or dead-letter topic: {describe_error(error)}"
            ) from error
        return hop

    def _published(self, hop: Hop, tp: Partition, offset: int, source: str) -> None:
        self._offsets.settle(tp, offset)
        kind = _observe.DEAD_LETTERS if hop.kind == "dead-letter" else _observe.RETRIES
        self._observer.count(kind, source)

    def _publish_failed(self, hop: Hop, tp: Partition, offset: int, error: str) -> None:
        self._observer.count(_observe.PUBLISH_FAILURES, tp[0])
        log.error(
            "processing.publish_failed",
            topic=tp[0],
            partition=tp[1],
            offset=offset,
            to=hop.topic,
            error=error,
        )

    def _event(self, msg: Message) -> None:
        """An error event from the consumer: logged; raises ProcessingError when the
        consumer left its group because a handler outran ``max.poll.interval.ms``."""
        err = msg.error()
        assert err is not None
        if err.code() == KafkaError._MAX_POLL_EXCEEDED:
            self.stop()
            raise ProcessingError(
                "a handler ran longer than max.poll.interval.ms: the consumer left its group"
                " (raise max.poll.interval.ms, or make the handler faster)"
            )
        if err.code() != KafkaError._PARTITION_EOF:
            log.warning("processing.consumer_error", error=err.str())

    def _forget(self, partitions: set[Partition]) -> None:
        self._offsets.forget(partitions)
        self._paused.forget(partitions)
        for entry in [e for e in self._again if (e[1].topic(), e[1].partition()) in partitions]:
            self._again.remove(entry)

    def _prepare_topics(self) -> None:
        """Learn partition counts; create missing retry and dead-letter topics (option)."""
        core = self._core
        mains = [t for t, main in core.main_of.items() if t == main]
        create = core.retry is None or core.retry.create_topics
        core.partitions = prepare_topics(
            self._config, {m: core.targets(m) for m in mains}, create=create
        )

    def _handle_again_later(self, msg: Message, raw: tuple[object, object], attempt: int) -> None:
        """The record's failure could not be published: handle it again in a while, its
        consumed bytes restored (it stays uncommitted until then)."""
        self._again.append((time.monotonic() + AGAIN_AFTER, msg, raw, attempt))

    def _due_again(self) -> list[tuple[Message, int]]:
        """Records to handle again now (their consumed key and value put back)."""
        if not self._again:
            return []
        now = time.monotonic()
        due = [e for e in self._again if e[0] <= now]
        if not due:
            return []
        self._again = [e for e in self._again if e[0] > now]
        for _, msg, raw, _ in due:
            msg.set_key(raw[0])
            msg.set_value(raw[1])
        return [(msg, attempt) for _, msg, _, attempt in due]
