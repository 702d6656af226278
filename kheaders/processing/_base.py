"""What the processing drivers share: their options checked, the engine built from them,
stopping and signals."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from confluent_kafka import Message, TopicPartition

from kheaders._client.producer import Producer
from kheaders._errors import ConfigurationError
from kheaders._runner import Runner
from kheaders.deadletter import DeadLetter
from kheaders.deadletter._config import dead_letter_option
from kheaders.processing import _validate as _v
from kheaders.processing._core import Core, HeadersFilter
from kheaders.processing._engine import Engine
from kheaders.processing._observe import Observer
from kheaders.processing._retry import RetryTopics
from kheaders.processing._setup import consumer_parts, prepare_topics
from kheaders.processing._setup import producer_config as _producer_config_for
from kheaders.processing._steps import Handle, Partition, Publish, Stop

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

Handler = Callable[[Message], Any]
COMMITTED_TIMEOUT = 10.0
"""Seconds to wait for the committed offsets of newly assigned partitions."""


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


class ProcessorBase(Runner):
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
        dead_letter = dead_letter_option(dead_letter)
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
        self._engine = Engine(
            self._core,
            self._observer,
            commit_interval=commit_interval,
            keep_timestamps=keep_timestamps,
        )
        Runner.__init__(self, handle_signals=handle_signals)
        self._error: BaseException | None = None
        """What stops ``run()`` with an error (raised once shut down)."""
        self.commit_interval = commit_interval
        self.poll_timeout = poll_timeout
        self.batch_size = batch_size
        self.shutdown_timeout = shutdown_timeout
        self.keep_timestamps = keep_timestamps

    def stop(self) -> None:
        """Ask ``run()`` to finish the record in hand, commit and return (any thread)."""
        self._engine.stopping = True  # (one flag write: safe from any thread)
        super().stop()

    def _stop_spent(self) -> None:
        super()._stop_spent()
        self._engine.stopping = False

    def _in_place_try(self, msg: Message) -> int:
        """Quick attempts in place already made for ``msg`` (see ``delivery()``)."""
        tries = self._engine.tries
        return tries.get(id(msg), 0) if tries else 0

    def _stopped(self, step: Stop) -> None:
        """A Stop step: stop reading; its error is raised once shut down."""
        if step.error is not None and self._error is None:
            self._error = step.error
        self.stop()

    def _prepare_topics(self) -> None:
        """Learn partition counts; create missing retry and dead-letter topics (option)."""
        core = self._core
        mains = [t for t, main in core.main_of.items() if t == main]
        create = core.retry is None or core.retry.create_topics
        core.partitions = prepare_topics(
            self._config, {m: core.targets(m) for m in mains}, create=create
        )


def now_ms() -> int:
    """Wall-clock epoch milliseconds: the engine's clock (due times cross processes)."""
    return time.time_ns() // 1_000_000


def partitions_of(tps: Sequence[TopicPartition]) -> set[Partition]:
    """``(topic, partition)`` of each."""
    return {(tp.topic, tp.partition) for tp in tps}


def call_handler(observer: Observer, step: Handle) -> None:
    """``step``'s handler on its record (in a span when the observer is on)."""
    msg = step.record
    if observer.active:
        topic, partition, offset = msg.topic() or "", msg.partition() or 0, msg.offset()
        headers: Any = msg.headers()
        with observer.processing(topic, partition, offset or 0, step.attempt, headers):
            step.handler(msg)
    else:
        step.handler(msg)


def produce(producer: Producer, step: Publish, report: Callable[..., None]) -> None:
    """``step``'s record to ``producer``, delivery reported to ``report``."""
    producer.produce(
        step.topic,
        value=step.value,
        key=step.key,
        partition=step.partition,
        timestamp=step.timestamp,
        headers=step.headers,
        on_delivery=report,
    )
