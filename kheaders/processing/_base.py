"""What the processing drivers share: their options checked, the engine built from them,
stopping and signals."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar

from confluent_kafka import Message, TopicPartition

from kheaders._client.producer import Producer
from kheaders._runner import Runner
from kheaders.deadletter._topics import ensure_topics
from kheaders.processing import _options
from kheaders.processing import _validate as _v
from kheaders.processing._core import Core
from kheaders.processing._engine import Engine
from kheaders.processing._observe import Observer
from kheaders.processing._setup import consumer_parts, producer_config
from kheaders.processing._steps import Handle, Partition, Publish, Stop

Handler = Callable[[Message], Any]
COMMITTED_TIMEOUT = 10.0
"""Seconds to wait for the committed offsets of newly assigned partitions."""
NEVER = 1e9
"""The commit interval (seconds) of a driver that does not commit on a timer."""
MAX_POLL_INTERVAL_MS = 300_000
"""librdkafka's ``max.poll.interval.ms`` when the config leaves it out."""


class ProcessorBase(Runner):
    """The options and state of a processor (see :class:`kheaders.processing.Processor`):
    the options ``OPTIONS`` names, checked (:mod:`._options`), and the engine built from them."""

    OPTIONS: ClassVar[Mapping[str, object]] = _options.PROCESSOR

    def __init__(
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: Handler | None,
        options: Mapping[str, object],
    ) -> None:
        _v.mapping("config", config)
        _v.topics_list(topics)
        _v.callable_or_none("handler", handler)
        opts = _options.checked(type(self).__name__, options, self.OPTIONS)
        consumer_config, key_de, value_de = self._consumer_parts(config)
        self._group = str(consumer_config["group.id"])
        self._rules: dict[str, Any] = {
            "topics": list(topics),
            "handler": handler,
            "handlers": opts["handlers"],
            "route_by": opts["route_by"],
            "filter": opts["filter"],
            "dead_letter": opts["dead_letter"],
            "key_de": key_de,
            "value_de": value_de,
            "group": self._group,
        }
        self._core = self._make_core(opts, config)
        self._config = dict(config)
        self._consumer_config = consumer_config
        self._producer_config = producer_config(config, opts["producer_config"])
        _v.producer_settings(self._producer_config)
        self._observer = Observer(self._group, opts["tracer_provider"], opts["meter_provider"])
        self.commit_interval: float = opts.get("commit_interval", NEVER)
        self.poll_timeout: float = opts["poll_timeout"]
        self.batch_size: int = opts.get("batch_size", 1)
        self.shutdown_timeout: float = opts["shutdown_timeout"]
        self.keep_timestamps: bool = opts["keep_timestamps"]
        self._engine = self._make_engine()
        Runner.__init__(self, handle_signals=opts["handle_signals"])
        self._error: BaseException | None = None
        """What stops ``run()`` with an error (raised once shut down)."""

    def _consumer_parts(
        self, config: Mapping[str, object]
    ) -> tuple[dict[str, object], Callable[..., object] | None, Callable[..., object] | None]:
        """The consumer's config, checked, and the deserializers (see :func:`consumer_parts`)."""
        parts = consumer_parts(config)
        _v.consumer_settings(parts[0])
        return parts

    def _make_core(self, opts: Mapping[str, Any], config: Mapping[str, object]) -> Core:
        """The rules, with the retry option (in-place attempts run on the polling thread)."""
        retry = opts["retry"]
        if retry is not None:
            retry.check_in_place(config, "max.poll.interval.ms", MAX_POLL_INTERVAL_MS)
        return Core(retry=retry, **self._rules)

    def _make_engine(self) -> Engine:
        return Engine(
            self._core,
            self._observer,
            commit_interval=self.commit_interval,
            keep_timestamps=self.keep_timestamps,
        )

    def stop(self) -> None:
        """Ask ``run()`` to finish the record in hand, commit (a share group: acknowledge) and
        return (any thread)."""
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
        core, topics = self._core, self._rules["topics"]
        create = core.retry is None or core.retry.create_topics
        core.partitions = ensure_topics(
            self._config, {t: core.targets(t) for t in topics}, create=create
        )


def now_ms() -> int:
    """Wall-clock epoch milliseconds: the engine's clock (due times cross processes)."""
    return time.time_ns() // 1_000_000


def partitions_of(tps: Sequence[TopicPartition]) -> set[Partition]:
    """``(topic, partition)`` of each."""
    return {(tp.topic, tp.partition) for tp in tps}


_UNOBSERVED = contextlib.nullcontext()


def observed(observer: Observer, step: Handle) -> AbstractContextManager[None]:
    """What ``step``'s handler call runs in: a span and its duration when the observer is
    on, else nothing."""
    if not observer.active:
        return _UNOBSERVED
    msg, headers = step.record, step.record.headers()
    where = (msg.topic() or "", msg.partition() or 0, msg.offset() or 0)
    return observer.processing(*where, step.attempt, headers)  # type: ignore[arg-type]


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
