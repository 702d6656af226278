"""Mirror: copy records between two clusters, routed on headers, with provenance, at least once.

Why raw confluent-kafka clients inside: a mirror copies bytes. kheaders' Producer and
Consumer normalise headers into ``Headers`` objects, run interceptors and serializers; none of
that may touch a copied record (an interceptor would re-stamp it), and the raw
``Message.headers()`` list is exactly what ``produce(headers=...)`` takes, order, duplicates
and null values kept. Header reads still go through kheaders' guard (``message_headers``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaException, TopicPartition
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from kheaders._client.clientlog import route_client_log
from kheaders._errors import ConfigurationError
from kheaders._log import get_logger
from kheaders._runner import Runner, connection_config, deprecated_keyword
from kheaders.deadletter import DeadLetter
from kheaders.deadletter._config import kheaders_dead_letter
from kheaders.mirror import _metrics
from kheaders.mirror._copy import Copier
from kheaders.mirror._deadletters import DeadLetters
from kheaders.mirror._metrics import MirrorStats
from kheaders.mirror._routes import Route, RoutingTable
from kheaders.mirror._sender import Sender
from kheaders.mirror._setup import ClusterConfig, Plan, client_config, plan
from kheaders.mirror._tracing import tracer_of

COMMITTED_TIMEOUT = 10.0
"""Seconds to wait, on assignment, for the committed offsets (and their metadata)."""

_log = get_logger("kheaders.mirror")

PARTITIONING = ("same", "key")
DEFAULT_GROUP = "kheaders-mirror"
DEFAULT_SHUTDOWN_TIMEOUT = 30.0
"""The source consumer group when ``config`` names none."""
_KEEP_ALIVE = 5.0
"""Seconds of back-pressure after which the consumer is paused and polled (its group
membership needs a poll within ``max.poll.interval.ms``); shorter waits read nothing."""

SOURCE_DEFAULTS: dict[str, Any] = {
    "auto.offset.reset": "earliest",
    "session.timeout.ms": 10_000,
    "heartbeat.interval.ms": 1_000,
}
"""The source consumer's settings unless given (the session two are left out under
``group.protocol=consumer``, KIP-848, where the broker owns them): read a topic from its
start when the group has no offset yet, and a shorter group session than librdkafka's 45 s
(heartbeats every second), so the first assignment comes within seconds (about 5 s on the
embedded broker, where a join takes half the session timeout: 23 s with librdkafka's
defaults) and a mirror that died is replaced within 10 s. A mirror polls continuously, so
the shorter session costs nothing; ``consumer_config`` overrides any of them."""

TARGET_DEFAULTS: dict[str, Any] = {
    "partitioner": "murmur2_random",
    "enable.idempotence": True,
    "message.timeout.ms": 0,
    "linger.ms": 5,
}
"""The target producer's settings unless given: Java's key partitioner, ordered retries, and
no giving up (a target that is down holds records, the mirror stops reading)."""


def reports_in_order(config: Mapping[str, Any]) -> bool:
    """Whether a producer with ``config`` reports a partition's records in produce order, even
    across retries: idempotent, or one request in flight at a time."""
    idempotent = str(config.get("enable.idempotence", False)).lower() in ("true", "1")
    one_at_a_time = int(config.get("max.in.flight.requests.per.connection", 1_000_000)) <= 1
    return idempotent or one_at_a_time


def _old_names(
    config: ClusterConfig | None,
    source: ClusterConfig | None,
    shutdown_timeout: float,
    drain_timeout: float | None,
) -> tuple[ClusterConfig | None, float]:
    """``config`` and ``shutdown_timeout``, also when given by their old names (warned)."""
    if source is not None:
        if config is not None:
            raise ConfigurationError("config: give the source cluster once (source= is old)")
        deprecated_keyword("Mirror", "source", "write config=", stacklevel=4)
        config = source
    if drain_timeout is not None:
        if shutdown_timeout != DEFAULT_SHUTDOWN_TIMEOUT:
            raise ConfigurationError("shutdown_timeout: give it once (drain_timeout= is old)")
        deprecated_keyword("Mirror", "drain_timeout", "write shutdown_timeout=", stacklevel=4)
        shutdown_timeout = drain_timeout
    return config, shutdown_timeout


def _old_consumer_settings(
    given: Mapping[str, Any], consumer_config: Mapping[str, Any] | None, group_id: str | None
) -> dict[str, Any]:
    """The consumer settings that came through the old ``consumer_config=`` and
    ``group_id=`` keywords (warned), to add to ``config``'s."""
    extra = {} if consumer_config is None else dict(consumer_config)
    if consumer_config is not None:
        deprecated_keyword(
            "Mirror", "consumer_config", "put the consumer settings in config", stacklevel=4
        )
    if group_id is not None:
        if "group.id" in given or "group.id" in extra:
            raise ConfigurationError("group.id: give it in config only (group_id= is old)")
        deprecated_keyword("Mirror", "group_id", "put 'group.id' in config", stacklevel=4)
        extra["group.id"] = group_id
    return extra


class Mirror(Runner):
    """Copies ``topics`` (names, or one ``^regex``) from the ``config`` cluster to ``target``.

    ``config`` is the source consumer's: bootstrap servers, or a librdkafka config (security,
    consumer settings and ``group.id``, default ``kheaders-mirror``), as a Processor's
    ``config`` is; its connection settings also build the dead-letter producer (plus
    ``dead_letter_config``) and the admin checks. ``target`` is the target cluster (bootstrap
    servers or a librdkafka config); ``producer_config`` adds settings to the target producer.
    Both go over :data:`SOURCE_DEFAULTS` and :data:`TARGET_DEFAULTS`.

    Records keep key, value, timestamp and headers byte for byte; ``routes`` (a
    RoutingTable, or Routes with the default ``{topic}``) choose target topics on headers
    only. ``partitioning="same"`` keeps the partition number where the target topic has it
    (else by key), ``"key"`` partitions by key with Java's murmur2. Records the target cannot
    take go to their dead-letter topic on the source cluster: ``dead_letter`` (a
    :class:`kheaders.deadletter.DeadLetter` or a topic name, ``{topic}`` = source topic;
    default ``{topic}-dlt``, kheaders' ``kheaders.dlt.*`` headers); ``dead_letter_topic=`` is
    its deprecated name. A missing dead-letter topic is created with its source topic's
    partition count where the source allows it, else :meth:`check` refuses it.

    At most ``max_in_flight`` copies are unacknowledged; a source offset is committed only
    once every record up to it was acknowledged. The lifecycle is every runner's
    (``kheaders._runner``): :meth:`run` until :meth:`stop`, SIGTERM or SIGINT (main thread,
    unless ``handle_signals=False``), then up to ``shutdown_timeout`` seconds to drain what is
    in flight; :meth:`close`; a context manager. Raises ConfigurationError for a bad setting;
    :meth:`check` (run by :meth:`run`) raises the start-time errors. Metrics and the batch
    spans go to ``meter_provider``/``tracer_provider`` (default: the global ones).

    Old keywords still work for a release, with a DeprecationWarning: ``source=`` (now
    ``config``), ``group_id=`` (now ``"group.id"`` in ``config``), ``consumer_config=`` (now
    part of ``config``) and ``drain_timeout=`` (now ``shutdown_timeout``).
    """

    def __init__(
        self,
        config: ClusterConfig | None = None,
        target: ClusterConfig | None = None,
        topics: Sequence[str] | str = (),
        routes: RoutingTable | Iterable[Route] = (),
        *,
        partitioning: str = "same",
        source_name: str | None = None,
        target_name: str | None = None,
        dead_letter: DeadLetter | str | None = None,
        max_in_flight: int = 10_000,
        batch_size: int = 1000,
        commit_interval: float = 1.0,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        handle_signals: bool = True,
        producer_config: Mapping[str, Any] | None = None,
        dead_letter_config: Mapping[str, Any] | None = None,
        meter_provider: MeterProvider | None = None,
        tracer_provider: TracerProvider | None = None,
        source: ClusterConfig | None = None,
        group_id: str | None = None,
        consumer_config: Mapping[str, Any] | None = None,
        drain_timeout: float | None = None,
        dead_letter_topic: str | None = None,
    ) -> None:
        super().__init__(handle_signals=handle_signals)
        config, shutdown_timeout = _old_names(config, source, shutdown_timeout, drain_timeout)
        if dead_letter_topic is not None:
            deprecated_keyword("Mirror", "dead_letter_topic", "write dead_letter=")
            dead_letter = dead_letter_topic
        if config is None:
            raise ConfigurationError("config: the source cluster (bootstrap servers or a config)")
        if target is None:
            raise ConfigurationError("target: the target cluster (bootstrap servers or a config)")
        if not topics:
            raise ConfigurationError("topics: name at least one source topic, or one ^regex")
        if partitioning not in PARTITIONING:
            raise ConfigurationError(f"partitioning: 'same' or 'key', got {partitioning!r}")
        if max_in_flight < 1 or batch_size < 1:
            raise ConfigurationError("max_in_flight and batch_size: must be >= 1")
        given = client_config(config)
        extra = _old_consumer_settings(given, consumer_config, group_id)
        settings = {**given, **extra}
        self.source = connection_config(given)
        """The source cluster's connection settings (every client of it takes them)."""
        self.target = client_config(target)
        self.topics = topics if isinstance(topics, str) else tuple(topics)
        self.table = routes if isinstance(routes, RoutingTable) else RoutingTable(routes)
        self.group_id = str(settings.pop("group.id", DEFAULT_GROUP))
        self.partitioning = partitioning
        self.names = (source_name, target_name)
        self.dead_letter = kheaders_dead_letter(dead_letter, "the mirror")
        self.max_in_flight = max_in_flight
        self.batch_size = batch_size
        self.commit_interval = commit_interval
        self.shutdown_timeout = shutdown_timeout
        self._consumer_config = {k: v for k, v in settings.items() if k not in self.source}
        self._producer_config = dict(producer_config or {})
        self._dead_letter_config = dict(dead_letter_config or {})
        self._meter_provider = meter_provider
        self._tracer = tracer_of(tracer_provider)
        self.stats = MirrorStats()
        """Counts by route and outcome, lag by source partition (see ``_metrics``)."""
        self.plan: Plan | None = None
        self.max_seen_in_flight = 0
        self._committed: dict[tuple[str, int], int] = {}
        self._dead = DeadLetters(self.dead_letter, self.group_id, self.stats)
        self._consumer: Any = None
        self._assigned = False
        self._sender: Sender | None = None

    @property
    def drain_timeout(self) -> float:
        """Deprecated name of :attr:`shutdown_timeout`."""
        return self.shutdown_timeout

    @property
    def in_flight(self) -> int:
        """Copies and dead letters handed to a producer and not yet acknowledged."""
        sender = self._sender
        return (0 if sender is None else sender.in_flight) + self._dead.in_flight

    def check(self, *, create_topics: bool = False) -> Plan:
        """Check settings, rules and topics against both clusters (see ``_setup.plan``);
        ``create_topics`` creates missing target topics instead of refusing them (with their
        source topic's partition count); missing dead-letter topics are always created
        where the source cluster allows it.

        Raises ConfigurationError listing every problem found; BrokerUnavailableError."""
        self.plan = plan(
            self.source,
            self.target,
            self.topics,
            self.table,
            source_name=self.names[0],
            target_name=self.names[1],
            dead_letter=self.dead_letter,
            create_topics=create_topics,
        )
        return self.plan

    def consumer_config(self) -> dict[str, Any]:
        """The source consumer's librdkafka settings: the source cluster's, the group,
        :data:`SOURCE_DEFAULTS` unless ``consumer_config`` sets them, then
        ``consumer_config``; commits are always the mirror's own."""
        merged = {**self.source, **self._consumer_config}
        defaults = dict(SOURCE_DEFAULTS)
        if str(merged.get("group.protocol", "classic")).lower() == "consumer":
            # KIP-848: the broker owns the session; librdkafka refuses these from a client.
            defaults.pop("session.timeout.ms")
            defaults.pop("heartbeat.interval.ms")
        return {
            **self.source,
            "group.id": self.group_id,
            **defaults,
            **self._consumer_config,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
        }

    def committed(self) -> dict[tuple[str, int], int]:
        """The offsets this mirror committed, by source partition."""
        return dict(self._committed)

    def run(self, *, idle_timeout: float | None = None) -> None:
        """Copy until :meth:`stop`, SIGTERM or SIGINT (or, when given, ``idle_timeout``
        seconds without a record once partitions are assigned); drain, commit, close the
        clients, return.

        Raises what :meth:`check` raises; KafkaException for a fatal client error;
        ProcessingError after :meth:`close` or while another ``run()`` is in progress.
        """
        with self._running():
            self._copy(idle_timeout)

    def _copy(self, idle_timeout: float | None) -> None:
        found = self.check()
        copier = Copier(self.table, found.source_id, found.target_id)
        self._consumer = confluent_kafka.Consumer(
            route_client_log(self.consumer_config(), watch_brokers=True)
        )
        producer_conf = {**self.target, **TARGET_DEFAULTS, **self._producer_config}
        self._sender = Sender(
            found,
            copier,
            confluent_kafka.Producer(route_client_log(producer_conf)),
            self._dead,
            stats=self.stats,
            tracer=self._tracer,
            same_partition=self.partitioning == "same",
            in_order=reports_in_order(producer_conf),
        )
        self._dead.open(
            confluent_kafka.Producer(
                route_client_log(
                    {
                        **self.source,
                        "enable.idempotence": True,
                        "message.timeout.ms": 0,
                        **self._dead_letter_config,
                    }
                )
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
            self._loop(self._sender, idle_timeout)
        finally:
            self._close()

    def _loop(self, sender: Sender, idle_timeout: float | None) -> None:
        next_commit = time.monotonic() + self.commit_interval
        last_record = last_read = time.monotonic()
        paused = False
        while not self._stop.is_set():
            fatal = sender.fatal or self._dead.fatal
            if fatal is not None:
                raise KafkaException(fatal)
            sender.send_retries()
            room = self.max_in_flight - self.in_flight
            if room <= 0:  # back-pressure: wait for acknowledgements, read nothing
                sender.producer.poll(0.05)
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
                sender.copy_batch(batch)
                self.max_seen_in_flight = max(self.max_seen_in_flight, self.in_flight)
            sender.producer.poll(0)
            self._dead.poll(0)
            sender.count_acknowledged()
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

    def _commit(self, *, asynchronous: bool, only: set[tuple[str, int]] | None = None) -> None:
        sender = self._sender
        assert sender is not None
        offsets = sender.offsets.to_commit(only)
        if not offsets:
            return
        try:
            self._consumer.commit(offsets=offsets, asynchronous=asynchronous)
        except KafkaException as exc:
            _log.warning("mirror.commit_failed", error=str(exc))
            return
        sender.offsets.committed(offsets)
        for tp in offsets:
            self._committed[(tp.topic, tp.partition)] = tp.offset

    def _measure_lag(self) -> None:
        assert self._sender is not None
        for (topic, partition), position in list(self._sender.positions.items()):
            try:
                _, high = self._consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=0.5, cached=True
                )
            except KafkaException:
                continue
            if high >= 0:
                self.stats.lag[(topic, partition)] = max(0, high - position)

    def _drain(self, deadline: float) -> None:
        sender = self._sender
        assert sender is not None
        while (
            (self.in_flight or sender.retries)
            and sender.fatal is None
            and self._dead.fatal is None
            and time.monotonic() < deadline
        ):
            sender.send_retries()
            sender.producer.poll(0.05)
            self._dead.poll(0.0)
        sender.count_acknowledged()

    def _on_assign(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        self._assigned = bool(partitions)
        if self._sender is None or not partitions:
            return
        try:  # what a previous run copied beyond its commit point is skipped
            committed = consumer.committed(partitions, timeout=COMMITTED_TIMEOUT)
        except KafkaException as exc:  # nothing skipped: copied again, at least once
            _log.warning("mirror.committed_unknown", error=str(exc))
            return
        for tp in committed:
            if tp.error is None:
                self._sender.offsets.restore((tp.topic, tp.partition), tp.offset, tp.metadata)

    def _on_revoke(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        self._drain(time.monotonic() + self.shutdown_timeout)
        revoked = {(tp.topic, tp.partition) for tp in partitions}
        self._commit(asynchronous=False, only=revoked)
        if self._sender is not None:
            self._sender.forget(revoked)

    def _on_lost(self, _consumer: Any, partitions: list[TopicPartition]) -> None:
        if self._sender is not None:
            self._sender.forget({(tp.topic, tp.partition) for tp in partitions})

    def _close(self) -> None:
        sender = self._sender
        try:
            if sender is not None:
                self._drain(time.monotonic() + self.shutdown_timeout)
                if self._consumer is not None:
                    self._commit(asynchronous=False)
        finally:
            if self._consumer is not None:
                self._consumer.close()
            self._consumer = None
            if sender is not None:  # what is still queued was not committed: re-sent
                sender.producer.purge()
                sender.producer.flush(1.0)
                sender.count_acknowledged()
                sender.producer = None
            self._dead.close()
