"""ShareProcessor: the processing engine's share-group (KIP-932) driver, on kheaders'
ShareConsumer.

Many members, in as many processes as wanted, read the same partitions; the broker hands
each record to one member at a time under a lock and counts its deliveries, which the driver
gives the engine as each record's attempt (``Polled.attempts``). The engine decides; this
driver carries its steps out with acknowledgements instead of commits:

* ``Handle``: the handler runs; ``Handled`` → the record is accepted.
* ``Publish`` of kind ``retry``: not published. The record is held for the retry's delay
  (under its lock), then released: the broker delivers it again, to any member, counting
  one more delivery.
* ``Publish`` of kind ``dead-letter``: published; once the broker acknowledged it, the record
  is rejected (never delivered again). A dead letter refused or left unacknowledged leaves
  the record released, never rejected: it comes back and is tried again.
* a record the engine took no step for (``filter`` said no) is accepted; one it had no time
  to start (stopping) is released.
* ``Commit``, ``Pause`` and ``Resume`` do not apply: a share group keeps no offsets, and
  no retry topic is read.

Acknowledgements travel with the next fetch; releases and rejections are committed at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack

from confluent_kafka import AcknowledgeType, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin._config import ConfigResource

from kheaders._client.admin import admin_client
from kheaders._client.producer import Producer
from kheaders._client.share import ACKNOWLEDGEMENT_MODE, EXPLICIT, ShareConsumer
from kheaders._errors import ConfigurationError, DeserializationError
from kheaders._runner import connection_config
from kheaders.deadletter._topics import ensure_topics
from kheaders.processing import _observe, _options
from kheaders.processing._base import Handler, ProcessorBase, now_ms, produce
from kheaders.processing._core import Core
from kheaders.processing._observe import log
from kheaders.processing._options import ShareOptions
from kheaders.processing._processor import Processor
from kheaders.processing._redelivery import Redelivery
from kheaders.processing._setup import consumer_parts
from kheaders.processing._steps import DEAD_LETTER, Acknowledged, Polled, Publish, Tick, Unreadable

ACCEPT, RELEASE, REJECT = AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT
GROUP_TIMEOUT = 15.0
"""Seconds to wait for the group's settings at start."""
_NOT_SHARE = ("enable.auto.commit", "enable.auto.offset.store")
"""Settings a share consumer refuses (consumer_parts sets them for a consumer group)."""


def group_settings(config: Mapping[str, object], group: str) -> dict[str, str]:
    """The share group's settings (``share.*``, the broker's defaults for those unset);
    empty when the cluster does not say: Kafka's defaults apply then."""
    resource = ConfigResource(ConfigResource.Type.GROUP, group)
    try:
        with admin_client(connection_config(config)) as admin:
            entries = admin.describe_configs([resource])[resource].result(GROUP_TIMEOUT)
    except KafkaException as exc:
        log.warning("processing.share_group_settings_unknown", group=group, error=str(exc))
        return {}
    return {k: v.value for k, v in entries.items() if v.value is not None}


class _Batch:
    """What becomes of each record of one fetch: its acknowledgement, or a hold first."""

    __slots__ = ("fate", "held", "letters", "unstarted")

    def __init__(self) -> None:
        self.unstarted = ACCEPT
        """What becomes of a record the engine took no step for: accepted (filtered out),
        or released when the engine was stopping already (it starts nothing then)."""
        self.fate: dict[int, AcknowledgeType] = {}
        self.held: list[tuple[int, Message, Publish]] = []
        """(release at, epoch ms; record; the retry Publish it stands for)."""
        self.letters: list[tuple[Publish, list[str | None]]] = []
        """Dead letters produced, each with its outcome once reported (None: written)."""


class ShareProcessor(Processor):
    """Reads ``topics`` as share group ``config['group.id']`` and calls ``handler(msg)`` once
    per delivery; ``msg.delivery_count()`` is the attempt (1 first). See the module doc for
    what happens to a record after its handler returned or raised.

    ``config`` is a :class:`kheaders.ShareConsumer` config (``group.id`` required;
    interceptors as for the ShareConsumer; deserializers run after ``filter`` and routing,
    as in :class:`Processor`; the processor acknowledges, so ``share.acknowledgement.mode``
    is explicit). Its connection settings also build the dead-letter producer
    (``producer_config`` adds or overrides). ``redelivery`` says how many deliveries and how
    long a hold (:class:`Redelivery`; the group's own delivery limit by default);
    ``dead_letter`` the dead-letter topic and header contract (``True``: ``DeadLetter()``,
    Spring's ``<topic>-dlt``). The other options are the :class:`Processor`'s (a record
    ``filter`` leaves out is accepted). ``run()`` blocks until ``stop()`` (any thread) or,
    on the main thread, SIGTERM/SIGINT: the record in hand is finished, the rest of its
    batch and the held records are released.

    Raises ConfigurationError for a bad argument or setting (naming it).
    """

    OPTIONS = _options.SHARE

    def __init__(
        self,
        config: Mapping[str, object],
        topics: Sequence[str],
        handler: Handler | None = None,
        **options: Unpack[ShareOptions],
    ) -> None:
        ProcessorBase.__init__(self, config, topics, handler, options)
        self._batch = _Batch()

    def _consumer_parts(
        self, config: Mapping[str, object]
    ) -> tuple[dict[str, object], Callable[..., object] | None, Callable[..., object] | None]:
        mode = config.get(ACKNOWLEDGEMENT_MODE, EXPLICIT)
        if mode != EXPLICIT:
            raise ConfigurationError(
                f"{ACKNOWLEDGEMENT_MODE}: the processor acknowledges each record; leave it out"
                f" (or 'explicit'), got {mode!r}"
            )
        consumer_config, key_de, value_de = consumer_parts(config)
        for key in _NOT_SHARE:
            consumer_config.pop(key, None)
        consumer_config[ACKNOWLEDGEMENT_MODE] = EXPLICIT
        return consumer_config, key_de, value_de

    def _make_core(self, opts: Mapping[str, Any], config: Mapping[str, object]) -> Core:
        """The rules, retrying by redelivery; a dead-letter topic is a must: a share group's
        last attempt is dead-lettered, then rejected."""
        if opts["dead_letter"] is None:
            raise ConfigurationError(
                "dead_letter: a share group's last attempt is dead-lettered, then rejected: give"
                " DeadLetter(...), a topic name or True (DeadLetter(): <topic>-dlt), not None"
            )
        self._redelivery: Redelivery = opts["redelivery"]
        return self._core_for(self._redelivery.attempts or 1)

    def _core_for(self, last_attempt: int) -> Core:
        return Core(retry=self._redelivery.as_retry(last_attempt), **self._rules)

    def run(self) -> None:
        """Process until stopped, then close the clients (acknowledgements committed).

        Raises ConfigurationError when ``redelivery`` does not fit the group's settings (read
        at start) or the broker refuses the config; BrokerUnavailableError when the cluster
        cannot be reached at start; ProcessingError for a handler slower than
        ``max.poll.interval.ms``.
        """
        with self._running():
            last = self._redelivery.last_attempt(group_settings(self._config, self._group))
            core = self._core = self._core_for(last)
            dead = core.dead_letter
            assert dead is not None
            topics: list[str] = self._rules["topics"]  # (never the retry topics' names)
            core.partitions = ensure_topics(self._config, {t: [dead.topic_for(t)] for t in topics})
            engine = self._engine = self._make_engine()
            engine.stopping = self._stop.is_set()
            producer = self._producer = Producer(self._producer_config)
            consumer = ShareConsumer(self._consumer_config)
            consumer.set_acknowledgement_commit_callback(_log_refused)
            try:
                consumer.subscribe(topics)
                self._poll(consumer)
            finally:
                self._shutdown(consumer, producer)
            if self._error is not None:
                raise self._error

    def _poll(self, consumer: ShareConsumer) -> None:
        engine, carry = self._engine, self._carry
        while not self._stop.is_set():
            batch = self._batch = _Batch()
            try:
                msgs = consumer.poll(self.poll_timeout).records()
            except DeserializationError as exc:  # unreadable headers: never retried
                carry(engine.send(Unreadable(exc, now_ms())))
                self._settle(consumer, batch, [exc.message])
                continue
            now = now_ms()
            carry(engine.send(Tick(now)))
            if msgs:
                batch.unstarted = RELEASE if engine.stopping else ACCEPT
                carry(engine.send(Polled(msgs, now, _attempts(msgs))))
                self._settle(consumer, batch, msgs)

    def _left(self, records: list[Message], i: int) -> list[Message]:
        """Records left unstarted at a stop are released: delivered again."""
        for rest in records[i:]:
            self._batch.fate[id(rest)] = RELEASE
        return records[:i]

    def _commit(self, step: Any) -> None:
        """Nothing: a share group keeps no offsets (the engine's timer never fires here)."""

    def _publish(self, step: Publish) -> None:
        batch = self._batch
        if step.kind != DEAD_LETTER:  # a retry: released after its delay, not published
            assert self._core.retry is not None
            delay = self._core.retry.delay_before(step.attempt + 1)
            batch.held.append((now_ms() + round(delay * 1000), step.record, step))
            return
        producer = self._producer
        assert producer is not None
        outcome: list[str | None] = []
        batch.letters.append((step, outcome))

        def report(err: KafkaError | None, _sent: Message) -> None:
            outcome.append(None if err is None else err.str())

        try:
            produce(producer, step, report)
        except Exception as exc:  # refused before sending (a header limit, a size)
            outcome.append(f"{type(exc).__name__}: {exc}")

    # -- acknowledging a batch ---------------------------------------------------------------

    def _settle(self, consumer: ShareConsumer, batch: _Batch, msgs: Sequence[Message]) -> None:
        """Acknowledge every record of a fetch: dead letters first (waited for), then the
        held records once due, then the rest."""
        engine = self._engine
        if batch.letters:
            assert self._producer is not None
            self._producer.flush(self.shutdown_timeout)
            for step, outcome in batch.letters:
                error = outcome[0] if outcome else "not acknowledged in time"
                if error is None:
                    batch.fate[id(step.record)] = REJECT
                    self._carry(engine.send(Acknowledged(step, None, now_ms())))
                else:
                    batch.fate[id(step.record)] = RELEASE
                    self._unpublished(step, error)
        held = {id(msg) for _, msg, _ in batch.held}
        fate, unstarted = batch.fate, batch.unstarted
        acknowledge = consumer.wrapped.acknowledge
        if not fate and not held:
            for msg in msgs:  # the common case: every record accepted
                if msg.error() is None:
                    acknowledge(msg, unstarted)
        else:
            for msg in msgs:
                if msg.error() is None and id(msg) not in held:
                    acknowledge(msg, fate.get(id(msg), unstarted))
        if batch.held:
            consumer.commit_async()  # the rest goes now: nothing is fetched while holding
            for due, msg, step in sorted(batch.held, key=lambda h: h[0]):
                wait = (due - now_ms()) / 1000
                if wait > 0 and not self._stop.is_set():
                    self._stop.wait(wait)
                consumer.acknowledge(msg, RELEASE)
                engine.send(Acknowledged(step, None, now_ms()))
        if batch.held or batch.letters:
            consumer.commit_async()

    def _unpublished(self, step: Publish, error: str) -> None:
        """A dead letter not written: the record is released (the broker delivers it again),
        where a consumer group's processor would handle it again itself."""
        msg = step.record
        tp = (msg.topic() or "", msg.partition() or 0)
        self._engine.offsets.settle(tp, msg.offset() or 0)  # released: no longer in hand here
        self._observer.count(_observe.PUBLISH_FAILURES, tp[0])
        log.error(
            "processing.publish_failed",
            topic=tp[0],
            partition=tp[1],
            offset=msg.offset(),
            to=step.topic,
            error=error,
            then="released",
        )


def _attempts(msgs: Sequence[Message]) -> list[int] | None:
    """Each record's attempt, the broker's delivery count; None when every record is on its
    first delivery (the engine's own assumption, which lets it take its short way)."""
    counts = [m.delivery_count() or 1 for m in msgs]
    return counts if any(c != 1 for c in counts) else None


def _log_refused(offsets: dict[TopicPartition, set[int]], error: KafkaException | None) -> None:
    """Log acknowledgements the broker refused (a lock expired first: the record was, or
    will be, delivered again)."""
    if error is not None:
        parts = sorted(f"{tp.topic}[{tp.partition}]" for tp in offsets)
        log.warning("processing.share_acknowledgement_refused", partitions=parts, error=str(error))
