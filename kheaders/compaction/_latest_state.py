"""LatestState: a live, read-only mapping of a topic's latest record per key (KIP-280).

It reads every partition of one topic through ``assign()`` (no consumer group), from the
beginning or from an offsets snapshot, and folds each record into a :class:`StateTable`.
Watermarks taken when catching up tell it when it has read everything that existed then.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from typing import Protocol, cast

from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from kheaders._client.consumer import Consumer as KConsumer
from kheaders._errors import BrokerUnavailableError, ConfigurationError, DeserializationError
from kheaders._log import get_logger
from kheaders._model.keys import check_name
from kheaders.compaction._latest import (
    CompactionStats,
    ConsumedMessage,
    Key,
    StateEntry,
    StateTable,
)
from kheaders.compaction._rules import CompactionRules

_log = get_logger("kheaders.compaction")


class StateConsumer(Protocol):
    """What LatestState needs of a consumer: confluent-kafka's ``Consumer`` API subset."""

    def assign(self, partitions: list[TopicPartition]) -> None: ...
    def poll(self, timeout: float = ...) -> ConsumedMessage | None: ...
    def get_watermark_offsets(
        self, partition: TopicPartition, timeout: float = ..., cached: bool = ...
    ) -> tuple[int, int]: ...
    def list_topics(self, topic: str | None = ..., timeout: float = ...) -> object: ...


class LatestState(Mapping[Key, StateEntry]):
    """The latest record per key of ``topic`` under a KIP-280 strategy; tombstones excluded.

    Give it a confluent-compatible ``consumer`` (``poll``/``assign``/``get_watermark_offsets``/
    ``list_topics``, or a :class:`kheaders.Consumer`; it is assigned every partition, no group
    is joined) or ``config`` to build its own :class:`kheaders.Consumer` (``bootstrap.servers``
    at least, deserializers and consumer interceptors allowed; closed by :meth:`close`).
    ``start_offsets`` maps partition -> first offset (default: the beginning).
    ``state[key]`` is a :class:`StateEntry` (``.value``, ``.headers``, ``.version``, ...).

    Keep it current with :meth:`poll_once`, :meth:`run_until_caught_up`, or
    :meth:`start`/:meth:`stop` (a background thread; then do not poll it yourself).

    Raises ConfigurationError for bad compaction settings or neither consumer nor config,
    InvalidNameError for a topic librdkafka cannot take (NUL, not UTF-8),
    BrokerUnavailableError when the topic's partitions cannot be listed.
    """

    def __init__(
        self,
        topic: str,
        consumer: StateConsumer | None = None,
        *,
        config: Mapping[str, object] | None = None,
        strategy: str | None = "offset",
        header: str | None = None,
        encoding: str = "long",
        rules: CompactionRules | None = None,
        start_offsets: Mapping[int, int] | None = None,
        keep_messages: bool = False,
        batch_size: int = 500,
    ) -> None:
        if rules is None:
            rules = CompactionRules.create(strategy, header=header, encoding=encoding)
        self.topic = check_name(topic)
        self.rules = rules
        self._table = StateTable(rules, topic)
        self._keep = keep_messages
        self._batch = batch_size
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._failure: BaseException | None = None
        self._owns_consumer = consumer is None
        if consumer is None:
            if config is None:
                raise ConfigurationError(
                    "LatestState needs a consumer or a config with bootstrap.servers"
                )
            settings: dict[str, object] = {
                "group.id": f"kheaders-latest-state-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                **config,
            }
            for key in CompactionRules.config_keys:  # its own settings, read above
                settings.pop(key, None)
            consumer = cast("StateConsumer", KConsumer(settings))
        self._consumer = consumer
        consume = getattr(consumer, "consume", None)
        self._consume = consume if callable(consume) else None
        # kheaders.Consumer reads records (headers wrapped, deserializers, interceptors);
        # metadata calls it does not forward go to the confluent consumer it wraps.
        wrapped = getattr(consumer, "wrapped", None)
        self._meta: StateConsumer = (
            wrapped
            if wrapped is not None and not hasattr(consumer, "get_watermark_offsets")
            else consumer
        )
        self._positions: dict[int, int] = {}
        try:
            self._partitions = self._assign(start_offsets or {})
        except BaseException:
            if self._owns_consumer:
                self.close()
            raise

    @classmethod
    def from_config(cls, topic: str, config: Mapping[str, object]) -> LatestState:
        """Build from one mapping: the KIP-280 ``compaction.*`` settings plus consumer settings.

        Raises ConfigurationError naming a bad compaction setting.
        """
        return cls(topic, config=config, rules=CompactionRules.from_config(config))

    def _assign(self, start_offsets: Mapping[int, int]) -> list[int]:
        try:
            meta = self._meta.list_topics(self.topic, timeout=10.0)
            topic_meta = meta.topics[self.topic]  # type: ignore[attr-defined]
        except Exception as exc:
            raise BrokerUnavailableError(
                f"could not list the partitions of topic {self.topic!r}: {exc}"
            ) from exc
        if topic_meta.error is not None or not topic_meta.partitions:
            raise BrokerUnavailableError(
                f"topic {self.topic!r} has no partitions: {topic_meta.error}"
            )
        partitions = sorted(topic_meta.partitions)
        self._consumer.assign(
            [
                TopicPartition(self.topic, p, start_offsets.get(p, OFFSET_BEGINNING))
                for p in partitions
            ]
        )
        for p, off in start_offsets.items():
            self._positions[p] = off
        return partitions

    # -- feeding ------------------------------------------------------------------------

    def poll_once(self, timeout: float = 1.0) -> int:
        """Fetch what is available (waiting up to ``timeout`` s) and fold it; return the count
        of records accounted for (folded, or counted as failed).

        A batch is accounted for in full before this returns: failures a
        :class:`kheaders.Consumer` keeps back from a ``consume()`` batch (raised by its next
        call, before it fetches more) are drained here and counted as ``undeserializable``.

        Raises RuntimeError while the background thread runs (the consumer is not shared).
        """
        if self._thread is not None and threading.current_thread() is not self._thread:
            raise RuntimeError("LatestState is running in the background; call stop() first")
        try:
            if self._consume is not None:
                batch = self._consume(self._batch, timeout)
            else:
                one = self._consumer.poll(timeout)
                batch = [] if one is None else [one]
        except DeserializationError as exc:
            # kheaders.Consumer has moved past the record; it is reported, not folded.
            self._failed(exc)
            return 1
        if not batch:
            return 0
        count = self._fold(batch)
        if self._consume is not None:
            count += self._drain_held()
        return count

    def _fold(self, batch: list[ConsumedMessage]) -> int:
        table = self._table
        positions = self._positions
        keep = self._keep
        with self._lock:
            for msg in batch:
                table.offer_message(msg, keep_message=keep)
                if msg.error() is None:
                    offset = msg.offset()
                    if offset is not None:
                        positions[cast(int, msg.partition())] = offset + 1
        return len(batch)

    def _failed(self, exc: DeserializationError) -> None:
        self._table.failed(exc)
        msg = exc.message
        with self._lock:
            partition, offset = msg.partition(), msg.offset()
            self._positions[partition] = max(self._positions.get(partition, 0), offset + 1)

    def _drain_held(self) -> int:
        """Raise out what ``consume()`` kept back from the batch just folded, counting each.

        A kheaders.Consumer raises kept failures from its next ``poll``/``consume``, one per
        call, before fetching; ``poll(0)`` then returns at most one more record (folded) or
        ``None``. A plain confluent consumer just returns its next record, if any.
        """
        count = 0
        while True:
            try:
                msg = self._consumer.poll(0)
            except DeserializationError as exc:
                self._failed(exc)
                count += 1
                continue
            if msg is not None:
                count += self._fold([msg])
            return count

    def high_watermarks(self, timeout: float = 10.0) -> dict[int, int]:
        """Each partition's high watermark now (the offset the next record will get)."""
        return {
            p: self._meta.get_watermark_offsets(
                TopicPartition(self.topic, p), timeout=timeout, cached=False
            )[1]
            for p in self._partitions
        }

    def _behind(self, highs: Mapping[int, int]) -> list[int]:
        lagging = [p for p, high in highs.items() if self._positions.get(p, 0) < high]
        position = getattr(self._meta, "position", None)
        if lagging and callable(position):
            # The fetch position also moves past offsets that carry no record (control
            # records, compacted-away offsets); trust it where our own count lags.
            tps = position([TopicPartition(self.topic, p) for p in lagging])
            moved = {tp.partition: tp.offset for tp in tps}
            lagging = [p for p in lagging if moved.get(p, -1) < highs[p]]
        return lagging

    def run_until_caught_up(self, timeout: float = 60.0, poll_timeout: float = 0.5) -> bool:
        """Fold records until every partition reaches the high watermark seen at the start.

        Returns True when caught up, False if ``timeout`` seconds passed first.
        """
        highs = self.high_watermarks()
        deadline = time.monotonic() + timeout
        while self._behind(highs):
            if time.monotonic() >= deadline:
                return False
            self.poll_once(poll_timeout)
        return True

    def start(self, poll_timeout: float = 0.5) -> LatestState:
        """Keep the state current in a daemon thread until :meth:`stop`; return self."""
        if self._thread is not None:
            raise RuntimeError("LatestState is already running")
        self._stopping.clear()
        self._failure = None
        self._thread = threading.Thread(
            target=self._run, args=(poll_timeout,), name=f"latest-state-{self.topic}", daemon=True
        )
        self._thread.start()
        return self

    def _run(self, poll_timeout: float) -> None:
        try:
            while not self._stopping.is_set():
                self.poll_once(poll_timeout)
        except BaseException as exc:  # surfaced by stop()
            self._failure = exc
            _log.error("compaction.latest_state_failed", topic=self.topic, error=repr(exc))

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the background thread; re-raise (chained) what made it fail, if anything."""
        thread = self._thread
        if thread is None:
            return
        self._stopping.set()
        thread.join(timeout)
        self._thread = None
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise RuntimeError(f"LatestState({self.topic!r}) background thread failed") from failure

    def close(self) -> None:
        """Stop, and close the consumer when LatestState built it."""
        self.stop()
        if self._owns_consumer:
            close = getattr(self._consumer, "close", None)
            if callable(close):
                close()

    def __enter__(self) -> LatestState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ------------------------------------------------------------------------

    @property
    def stats(self) -> CompactionStats:
        """The live counters (records seen, replaced, rejected, anomalies, ...)."""
        return self._table.stats

    def positions(self) -> dict[int, int]:
        """Partition -> next offset to read: a snapshot to resume from (``start_offsets``)."""
        with self._lock:
            return dict(self._positions)

    def as_dict(self) -> dict[Key, object]:
        """A ``{key: value}`` snapshot of the live state."""
        with self._lock:
            return {e.key: e.value for e in self._table.live_entries()}

    def __getitem__(self, key: Key) -> StateEntry:
        entry = self._table.get_live(key)
        if entry is None:
            raise KeyError(key)
        return entry

    def __contains__(self, key: object) -> bool:
        return self._table.get_live(key) is not None  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self._table.live

    def __iter__(self) -> Iterator[Key]:
        with self._lock:
            keys = [e.key for e in self._table.live_entries()]
        return iter(keys)

    def __repr__(self) -> str:
        return (
            f"LatestState(topic={self.topic!r}, strategy={self.rules.strategy!r}, keys={len(self)})"
        )
