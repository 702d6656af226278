"""Mirror: copy records between two clusters, routed on headers, with provenance, at least once.

Why raw confluent-kafka clients inside: a mirror copies bytes. kheaders' Producer and
Consumer normalise headers into ``Headers`` objects, run interceptors and serializers; none of
that may touch a copied record (an interceptor would re-stamp it), and the raw
``Message.headers()`` list is exactly what ``produce(headers=...)`` takes, order, duplicates
and null values kept. Header reads still go through kheaders' guard (``message_headers``).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, Message, TopicPartition
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from kheaders._errors import ConfigurationError
from kheaders._log import get_logger
from kheaders._model.received import HEADER_FAILURES, call_headers, unreadable_headers
from kheaders.mirror import _metrics
from kheaders.mirror._copy import Copier, HeaderList, RefusedHopsError
from kheaders.mirror._deadletters import REFUSED, TOO_LARGE, DeadLetters
from kheaders.mirror._metrics import MirrorStats
from kheaders.mirror._routes import SAME_TOPIC, Route, RoutingTable
from kheaders.mirror._setup import ClusterConfig, Plan, client_config, plan
from kheaders.mirror._tracing import link_record, start_batch_span, tracer_of
from kheaders.mirror._tracker import PartitionTrack, Pending

_log = get_logger("kheaders.mirror")

PARTITIONING = ("same", "key")
LINKS_PER_SPAN = 128
"""Records per batch span when tracing records (OpenTelemetry SDK's default link limit)."""
_KEEP_ALIVE = 5.0
"""Seconds of back-pressure after which the consumer is paused and polled (its group
membership needs a poll within ``max.poll.interval.ms``); shorter waits read nothing."""
_NO_TIMESTAMP = confluent_kafka.TIMESTAMP_NOT_AVAILABLE

TARGET_DEFAULTS: dict[str, Any] = {
    "partitioner": "murmur2_random",
    "enable.idempotence": True,
    "message.timeout.ms": 0,
    "linger.ms": 5,
}
"""The target producer's settings unless given: Java's key partitioner, ordered retries, and
no giving up (a target that is down holds records, the mirror stops reading)."""


class Mirror:
    """Copies ``topics`` (names, or one ``^regex``) from ``source`` to ``target``.

    Records keep key, value, timestamp and headers byte for byte; ``routes`` (a
    RoutingTable, or Routes with the default ``{topic}``) choose target topics on headers
    only. ``partitioning="same"`` keeps the partition number where the target topic has it
    (else by key), ``"key"`` partitions by key with Java's murmur2. Records the target cannot
    take go to ``dead_letter_topic`` (``{topic}`` = source topic) on the source cluster.

    At most ``max_in_flight`` copies are unacknowledged; a source offset is committed only
    once every record up to it was acknowledged. Raises ConfigurationError for a bad setting;
    :meth:`check` (run by :meth:`run`) raises the start-time errors. Metrics and the batch
    spans go to ``meter_provider``/``tracer_provider`` (default: the global ones).
    ``consumer_config``, ``producer_config`` and ``dead_letter_config`` add librdkafka
    settings to the source consumer, the target producer and the dead-letter producer.
    """

    def __init__(
        self,
        source: ClusterConfig,
        target: ClusterConfig,
        topics: Sequence[str] | str,
        routes: RoutingTable | Iterable[Route] = (),
        *,
        group_id: str = "kheaders-mirror",
        partitioning: str = "same",
        source_name: str | None = None,
        target_name: str | None = None,
        dead_letter_topic: str = SAME_TOPIC + ".dlt",
        max_in_flight: int = 10_000,
        batch_size: int = 1000,
        commit_interval: float = 1.0,
        drain_timeout: float = 30.0,
        consumer_config: Mapping[str, Any] | None = None,
        producer_config: Mapping[str, Any] | None = None,
        dead_letter_config: Mapping[str, Any] | None = None,
        meter_provider: MeterProvider | None = None,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        if partitioning not in PARTITIONING:
            raise ConfigurationError(f"partitioning: 'same' or 'key', got {partitioning!r}")
        if max_in_flight < 1 or batch_size < 1:
            raise ConfigurationError("max_in_flight and batch_size: must be >= 1")
        self.source = client_config(source)
        self.target = client_config(target)
        self.topics = topics if isinstance(topics, str) else tuple(topics)
        self.table = routes if isinstance(routes, RoutingTable) else RoutingTable(routes)
        self.group_id = group_id
        self.partitioning = partitioning
        self.names = (source_name, target_name)
        self.dead_letter_topic = dead_letter_topic
        self.max_in_flight = max_in_flight
        self.batch_size = batch_size
        self.commit_interval = commit_interval
        self.drain_timeout = drain_timeout
        self._consumer_config = dict(consumer_config or {})
        self._producer_config = dict(producer_config or {})
        self._dead_letter_config = dict(dead_letter_config or {})
        self._meter_provider = meter_provider
        self._tracer = tracer_of(tracer_provider)
        self.stats = MirrorStats()
        """Counts by route and outcome, lag by source partition (see ``_metrics``)."""
        self.plan: Plan | None = None
        self._in_flight = 0
        self.max_seen_in_flight = 0
        self._tracks: dict[tuple[str, int], PartitionTrack] = {}
        self._committed: dict[tuple[str, int], int] = {}
        self._partitions: dict[tuple[str, int], int] = {}
        self._retries: list[tuple[Pending, str, int, HeaderList]] = []
        self._dead = DeadLetters(self._dead_letter_topic_of, group_id, self.stats)
        self._stop = threading.Event()
        self._consumer: Any = None
        self._assigned = False
        self._fatal: KafkaError | None = None
        self._producer: Any = None

    @property
    def in_flight(self) -> int:
        """Copies and dead letters handed to a producer and not yet acknowledged."""
        return self._in_flight + self._dead.in_flight

    def check(self) -> Plan:
        """Check settings, rules and topics against both clusters (see ``_setup.plan``)."""
        self.plan = plan(
            self.source,
            self.target,
            self.topics,
            self.table,
            source_name=self.names[0],
            target_name=self.names[1],
            dead_letter_topic=self.dead_letter_topic,
        )
        return self.plan

    def stop(self) -> None:
        """Ask :meth:`run` to finish: it drains what is in flight, commits, and returns."""
        self._stop.set()

    def committed(self) -> dict[tuple[str, int], int]:
        """The offsets this mirror committed, by source partition."""
        return dict(self._committed)

    def run(self, *, idle_timeout: float | None = None) -> None:
        """Copy until :meth:`stop` (or, when given, ``idle_timeout`` seconds without a record
        once partitions are assigned).

        Raises what :meth:`check` raises; KafkaException for a fatal client error.
        """
        found = self.check()
        self._stop.clear()
        copier = Copier(self.table, found.source_id, found.target_id)
        consumer_conf = {
            **self.source,
            "group.id": self.group_id,
            "auto.offset.reset": "earliest",
            **self._consumer_config,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
        }
        self._consumer = confluent_kafka.Consumer(consumer_conf)
        self._producer = confluent_kafka.Producer(
            {**self.target, **TARGET_DEFAULTS, **self._producer_config}
        )
        self._dead.open(
            confluent_kafka.Producer(
                {
                    **self.source,
                    "enable.idempotence": True,
                    "message.timeout.ms": 0,
                    **self._dead_letter_config,
                }
            )
        )
        _metrics.report(self.stats, self._meter_provider)
        subscription = list(found.source_topics)  # a pattern is resolved at start
        self._assigned = False
        self._consumer.subscribe(
            subscription,
            on_assign=self._on_assign,
            on_revoke=self._on_revoke,
            on_lost=self._on_lost,
        )
        try:
            self._loop(copier, idle_timeout)
        finally:
            self._close()

    def _loop(self, copier: Copier, idle_timeout: float | None) -> None:
        # the clients are read from self each time: no frame keeps them alive after close
        next_commit = time.monotonic() + self.commit_interval
        last_record = last_read = time.monotonic()
        paused = False
        while not self._stop.is_set():
            fatal = self._fatal or self._dead.fatal
            if fatal is not None:
                raise KafkaException(fatal)
            self._send_retries()
            room = self.max_in_flight - self.in_flight
            if room <= 0:  # back-pressure: wait for acknowledgements, read nothing
                self._producer.poll(0.05)
                self._dead.poll(0)
                batch = []
                if time.monotonic() - last_read > _KEEP_ALIVE:
                    # a long wait (target down): stay in the group without fetching
                    if not paused:
                        self._consumer.pause(self._consumer.assignment())
                        paused = True
                    batch = [m for m in [self._consumer.poll(0)] if m is not None]
                    last_read = time.monotonic()
            else:
                if paused:  # resuming refetches from the position: nothing is skipped
                    self._consumer.resume(self._consumer.assignment())
                    paused = False
                batch = self._consumer.consume(min(self.batch_size, room), 0.1)
                last_read = time.monotonic()
            if batch or not self._assigned:
                last_record = time.monotonic()
                self._copy_batch(copier, batch)
            self._producer.poll(0)
            self._dead.poll(0)
            now = time.monotonic()
            if now >= next_commit:
                self._commit(asynchronous=False)
                self._measure_lag()
                next_commit = now + self.commit_interval
            if (
                idle_timeout is not None
                and self.in_flight == 0
                and now - last_record > idle_timeout
            ):
                return

    def _copy_batch(self, copier: Copier, batch: list[Message]) -> None:
        plan_ = self.plan
        assert plan_ is not None
        start = 0
        while start < len(batch):
            chunk = batch[start:]
            span = start_batch_span(self._tracer, plan_.source_id, plan_.target_id, chunk)
            recording = span.is_recording()
            if recording:  # an SDK keeps 128 links per span by default: a span per 128
                chunk = chunk[:LINKS_PER_SPAN]
                span.set_attribute("messaging.batch.message_count", len(chunk))
            start += len(chunk)
            try:
                for msg in chunk:
                    error = msg.error()
                    if error is not None:
                        if error.fatal():
                            raise KafkaException(error)
                        _log.warning("mirror.consume_error", error=str(error))
                        continue
                    self._copy(copier, msg, span if recording else None)
            finally:
                span.end()
        self.max_seen_in_flight = max(self.max_seen_in_flight, self.in_flight)

    def _copy(self, copier: Copier, msg: Message, span: Any) -> None:
        topic: str = msg.topic()  # type: ignore[assignment]
        partition: int = msg.partition()  # type: ignore[assignment]
        offset: int = msg.offset()  # type: ignore[assignment]
        track = self._tracks.get((topic, partition))
        if track is None:
            track = self._tracks[(topic, partition)] = PartitionTrack()
        track.position = offset + 1
        try:
            headers = call_headers(msg)
        except HEADER_FAILURES as exc:
            unreadable_headers(msg, exc)
            refused = Pending(track, offset, msg, "-", 1)
            track.add(refused)
            self._dead.send(refused, "a header key is not UTF-8: the target client cannot carry it")
            return
        if span is not None and headers:
            link_record(span, msg, headers)
        try:
            route, targets, out = copier.prepare(topic, partition, offset, headers)
        except RefusedHopsError as exc:
            refused = Pending(track, offset, msg, "-", 1)
            track.add(refused)
            self._dead.send(refused, str(exc))
            return
        pending = Pending(track, offset, msg, route, len(targets))
        track.add(pending)
        if not targets:
            self.stats.add(route, _metrics.LOOPED if route == "loop" else _metrics.DROPPED, topic)
            return
        for target in targets:
            self._send(pending, target, out)

    def _target_partition(self, target: str, partition: int) -> int:
        """The partition to write: the source's number where the target has it (``same``),
        else -1 (the partitioner: murmur2 of the key)."""
        found = self._partitions.get((target, partition))
        if found is None:
            plan_ = self.plan
            assert plan_ is not None
            same = self.partitioning == "same"
            found = partition if same and partition < plan_.target_partitions.get(target, 0) else -1
            self._partitions[(target, partition)] = found
        return found

    def _send(self, pending: Pending, target: str, out: HeaderList) -> None:
        msg = pending.message
        ts_type, ts = msg.timestamp()
        delivered = functools.partial(self._delivered, pending, target, out)
        partition = self._target_partition(target, msg.partition())
        while True:
            try:
                self._producer.produce(
                    target,
                    msg.value(),
                    msg.key(),
                    partition,
                    on_delivery=delivered,
                    timestamp=ts if ts_type != _NO_TIMESTAMP else 0,
                    headers=out,
                )
            except BufferError:
                self._producer.poll(0.1)
                continue
            except KafkaException as exc:
                code = exc.args[0].code()
                if code not in TOO_LARGE:
                    raise
                self._dead.send(pending, f"over the target's size limit (to {target!r})")
                return
            self._in_flight += 1
            return

    def _delivered(
        self, pending: Pending, target: str, out: HeaderList, error: Any, _msg: Any
    ) -> None:
        self._in_flight -= 1
        if error is None:
            key = (pending.route, _metrics.SENT, pending.message.topic(), target)
            counts = self.stats.counts
            counts[key] = counts.get(key, 0) + 1
            pending.remaining -= 1
            if not pending.remaining:
                pending.track.advance()
            return
        source = pending.message.topic() or ""
        if error.fatal():  # the producer is unusable: stop, committing nothing past it
            self._fatal = error
        elif error.code() in REFUSED:
            self._dead.send(pending, f"the target refused it ({error.name()}, to {target!r})")
        else:  # the target had a problem, not the record: send it again
            self.stats.add(pending.route, _metrics.RETRIED, source, target)
            self._retries.append((pending, target, 0, out))

    def _dead_letter_topic_of(self, source_topic: str) -> str:
        found = self.plan.dead_letter.get(source_topic) if self.plan is not None else None
        return found or self.dead_letter_topic.replace(SAME_TOPIC, source_topic)

    def _send_retries(self) -> None:
        retries, self._retries = self._retries, []
        for pending, target, _, out in retries:
            self._send(pending, target, out)

    def _commit(self, *, asynchronous: bool, only: set[tuple[str, int]] | None = None) -> None:
        offsets = []
        for (topic, partition), track in self._tracks.items():
            if only is not None and (topic, partition) not in only:
                continue
            upto = track.to_commit()
            if upto is not None:
                offsets.append(TopicPartition(topic, partition, upto))
        if not offsets:
            return
        try:
            self._consumer.commit(offsets=offsets, asynchronous=asynchronous)
        except KafkaException as exc:
            _log.warning("mirror.commit_failed", error=str(exc))
            return
        for tp in offsets:
            self._tracks[(tp.topic, tp.partition)].committed = tp.offset
            self._committed[(tp.topic, tp.partition)] = tp.offset

    def _measure_lag(self) -> None:
        for (topic, partition), track in list(self._tracks.items()):
            try:
                _, high = self._consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=0.5, cached=True
                )
            except KafkaException:
                continue
            if high >= 0 and track.position is not None:
                self.stats.lag[(topic, partition)] = max(0, high - track.position)

    def _drain(self, deadline: float) -> None:
        while (
            (self.in_flight or self._retries)
            and self._fatal is None
            and self._dead.fatal is None
            and time.monotonic() < deadline
        ):
            self._send_retries()
            self._producer.poll(0.05)
            self._dead.poll(0.0)

    def _on_assign(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self._assigned = bool(partitions)

    def _on_revoke(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self._drain(time.monotonic() + self.drain_timeout)
        revoked = {(tp.topic, tp.partition) for tp in partitions}
        self._commit(asynchronous=False, only=revoked)
        for key in revoked:
            self._tracks.pop(key, None)

    def _on_lost(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            self._tracks.pop((tp.topic, tp.partition), None)

    def _close(self) -> None:
        try:
            if self._producer is not None:
                self._drain(time.monotonic() + self.drain_timeout)
                if self._consumer is not None:
                    self._commit(asynchronous=False)
        finally:
            if self._consumer is not None:
                self._consumer.close()
            self._consumer = None
            if self._producer is not None:  # what is still queued was not committed: re-sent
                self._producer.purge()
                self._producer.flush(1.0)
            self._producer = None
            self._dead.close()
