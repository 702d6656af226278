"""The processing engine: every decision a processor makes, free of I/O (h11's sans-IO style).

A driver feeds it events and carries out the steps it answers with (see
:mod:`kheaders.processing._steps` for both and for how a driver uses them). The engine
decides, once for every driver: which records to handle and with which handler (``filter``,
``route_by``), the deserialization rule, each record's attempt and due time, in-place
retries and their delays, where a failure goes (retry topic, dead-letter topic, or a stop),
what is committed (never past a record in hand: see :mod:`kheaders._offsets`), and what stopping
does with unsent publications (purged: their records stay uncommitted and are read again).

A retry-topic record read before its due time pauses its partition, seeking back to it,
until then (never held in memory): the group stays alive, every other partition flows, and
a rebalance meanwhile loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, Message, TopicPartition

from kheaders._errors import ConfigurationError, DeserializationError, ProcessingError
from kheaders._offsets import Offsets
from kheaders.deadletter._exceptions import describe_error
from kheaders.processing import _observe
from kheaders.processing._core import Core
from kheaders.processing._observe import Observer, log
from kheaders.processing._steps import (
    DEAD_LETTER,
    EVENTS,
    Acknowledged,
    Assigned,
    Closing,
    Commit,
    Committed,
    Event,
    Failed,
    Handle,
    Handled,
    HandleEach,
    Lost,
    Partition,
    Pause,
    Polled,
    Publish,
    Purge,
    Resume,
    Revoked,
    Step,
    Stop,
    StopRequested,
    Tick,
    Unreadable,
)

AGAIN_AFTER_MS = 1000
"""A record whose failure could not be published is handled again this much later."""

REFUSED_BY_BROKER = {
    KafkaError.INVALID_SESSION_TIMEOUT: "session.timeout.ms",
    KafkaError.GROUP_AUTHORIZATION_FAILED: "group.id",
    KafkaError.INCONSISTENT_GROUP_PROTOCOL: "group.protocol",
}
"""Consumer errors that mean the broker refuses the config for good: the setting to blame."""

_NO_STEPS: list[Step] = []


class Engine:
    """A processor's decisions; ``send(event)`` answers the steps to carry out, in order.

    ``commit_interval`` in seconds; ``concurrent``: the driver handles several records at
    once (each record to handle is then in hand until its outcome is reported);
    ``keep_timestamps``: publications keep the original's timestamp (else 0: stamped when
    sent).
    """

    def __init__(
        self,
        core: Core,
        observer: Observer,
        *,
        commit_interval: float = 1.0,
        concurrent: bool = False,
        keep_timestamps: bool = False,
    ) -> None:
        self.core = core
        self.observer = observer
        self.offsets = Offsets()
        self.commit_interval_ms = round(commit_interval * 1000)
        self.concurrent = concurrent
        self.keep_timestamps = keep_timestamps
        self.stopping = False
        """Once True, nothing more is started (a driver checks it before each record)."""
        self.paused: dict[Partition, tuple[int, int]] = {}
        """Paused partitions: (due epoch ms, offset sought back to)."""
        self.read_ahead = False
        """Set by a driver whose consumer reads ahead past a seek (kheaders.aio's): then,
        after a Pause, the partition's records past the offset sought back to are dropped
        until that one comes (they were read before the seek; they come again after it)."""
        self.sought: dict[Partition, int] = {}
        self.tries: dict[int, int] = {}
        """``id(record)`` -> in-place attempts made so far (while some are)."""
        self._again: list[tuple[int, Message, tuple[object, object], int]] = []
        self._last_commit: int | None = None
        self._on: dict[type, Callable[[Any], list[Step]]] = {
            kind: getattr(self, "_" + kind.__name__.lower()) for kind in EVENTS
        }

    def send(self, event: Event) -> list[Step]:
        """The steps ``event`` calls for (often none)."""
        return self._on[type(event)](event)

    def wait(self, longest: float, now: int) -> float:
        """Seconds the next read may block: ``longest``, or less when something is due."""
        dues = [due for due, _ in self.paused.values()] + [e[0] for e in self._again]
        return max(0.0, min(longest, (min(dues) - now) / 1000)) if dues else longest

    def commit_point(self) -> list[TopicPartition]:
        """The offsets (with metadata) moved since the last ``Committed``, interval or not:
        what an exactly-once driver sends with its transaction (then ``Committed``)."""
        return self.offsets.to_commit()

    # -- reading --------------------------------------------------------------------------

    def _polled(self, ev: Polled) -> list[Step]:
        if self.stopping or not ev.records:
            return _NO_STEPS
        core, offsets, concurrent = self.core, self.offsets, self.concurrent
        observed = self.observer.refresh()
        fast = core.plain and not observed and not offsets.restoring and ev.attempts is None
        retry_topics = core.retry_topics
        if fast and not concurrent:  # the common case: the whole batch takes the short way
            for msg in ev.records:
                if msg.error() is not None or msg.topic() in retry_topics:
                    break
            else:
                return [HandleEach(list(ev.records), core.handler)]  # type: ignore[arg-type]
        steps: list[Step] = []
        run: HandleEach | None = None
        for i, msg in enumerate(ev.records):
            if msg.error() is not None:
                steps.extend(self._consumer_error(msg))
                run = None
                continue
            topic = msg.topic()
            if fast and topic not in retry_topics:  # the short way: nothing to decide
                if run is None:
                    run = HandleEach([], core.handler)  # type: ignore[arg-type]
                    steps.append(run)
                run.records.append(msg)
                if concurrent:  # in hand until its worker reports it
                    offsets.start((topic, msg.partition()), msg.offset())  # type: ignore[arg-type]
                continue
            run = None
            tp = (topic, msg.partition())
            if self.paused and tp in self.paused:
                continue  # read before its partition paused: read again once due
            if self.sought and tp in self.sought:
                if msg.offset() > self.sought[tp]:  # type: ignore[operator]
                    continue  # read ahead before the seek: read again after it
                del self.sought[tp]
            attempt = ev.attempts[i] if ev.attempts is not None else None
            self._one(msg, attempt, ev.now, steps)
        return steps

    def _one(self, msg: Message, attempt: int | None, now: int, steps: list[Step]) -> None:
        """One record through every rule (done before, due time, filter, route,
        deserialize); its steps added to ``steps`` (a record to handle joins the run there
        when it can)."""
        core = self.core
        tp = (msg.topic() or "", msg.partition() or 0)
        offset = msg.offset() or 0
        offsets = self.offsets
        if tp in offsets.restoring and offsets.arrived(tp, offset):
            return  # a previous run settled it (named in its commit's metadata)
        due = core.due_ms(msg, now)
        if due is not None:
            self.paused[tp] = (due, offset)
            if self.read_ahead:
                self.sought[tp] = offset
            log.debug("processing.paused", topic=tp[0], partition=tp[1], offset=offset, due=due)
            steps.append(Pause(TopicPartition(tp[0], tp[1], offset), due))
            return
        if not core.accepts(msg):
            offsets.settled_now(tp, offset)
            return
        if attempt is None:
            attempt = core.attempt(msg)
        raw = (msg.key(), msg.value())  # the consumed bytes, republished on failure
        handler = core.handler_for(msg)
        if handler is None:
            error = ProcessingError(
                f"no handler for the record at {tp[0]}[{tp[1]}]@{offset}:"
                f" {core.route_by!r} matches no route and there is no default"
            )
            steps.extend(self._failure(msg, raw, error, attempt, now))
            return
        try:
            core.deserialize(msg)
        except DeserializationError as exc:
            steps.extend(self._failure(msg, raw, exc, attempt, now))
            return
        if self.concurrent:
            offsets.start(tp, offset)
        if self.observer.active:  # a span per record: the driver's Handle makes it
            steps.append(Handle(msg, handler, attempt, raw))
            return
        run = steps[-1] if steps else None
        if type(run) is not HandleEach or run.handler is not handler or run.attempt != attempt:
            deserialized = core.key_de is not None or core.value_de is not None
            run = HandleEach([], handler, attempt, [] if deserialized else None)
            steps.append(run)
        run.records.append(msg)
        if run.raws is not None:
            run.raws.append(raw)

    def _unreadable(self, ev: Unreadable) -> list[Step]:
        msg = getattr(ev.error, "message", None)
        if msg is None:
            raise TypeError("Unreadable: the error carries no record")
        return self._failure(msg, (msg.key(), msg.value()), ev.error, 1, ev.now)

    def _consumer_error(self, msg: Message) -> list[Step]:
        """An error event from the consumer: most are logged; a handler slower than
        ``max.poll.interval.ms`` or a config the broker refuses for good stops."""
        err = msg.error()
        assert err is not None
        code = err.code()
        if code == KafkaError._MAX_POLL_EXCEEDED:
            why = "a handler ran longer than max.poll.interval.ms: the consumer left its group"
            hint = " (raise max.poll.interval.ms, or make the handler faster)"
            return self._stop(ProcessingError(why + hint))
        setting = REFUSED_BY_BROKER.get(code)
        if setting is not None or err.fatal():
            why = f"{setting or 'config'}: the broker refused the consumer: {err.str()}"
            return self._stop(ConfigurationError(why))
        if code != KafkaError._PARTITION_EOF:
            log.warning("processing.consumer_error", error=err.str())
        return _NO_STEPS

    # -- outcomes -------------------------------------------------------------------------

    def _handled(self, ev: Handled) -> list[Step]:
        offsets, tries = self.offsets, self.tries
        if self.concurrent or tries:  # one by one: in any order, or some retried in place
            settle = offsets.settle if self.concurrent else offsets.settled_now
            for msg in ev.records:
                tries.pop(id(msg), None)
                settle((msg.topic() or "", msg.partition() or 0), msg.offset() or 0)
        else:  # in order: the last one of each partition
            last = {(m.topic(), m.partition()): m.offset() for m in ev.records}
            for tp, offset in last.items():
                offsets.settled_now(tp, offset)  # type: ignore[arg-type]
        return _NO_STEPS

    def _failed(self, ev: Failed) -> list[Step]:
        step, error, msg, retry = ev.step, ev.error, ev.step.record, self.core.retry
        if self.stopping:  # stopped between attempts: neither settled nor republished
            self.tries.pop(id(msg), None)
            return _NO_STEPS
        if retry is not None and step.tries < retry.in_place and retry.retryable(error):
            tries = self.tries[id(msg)] = step.tries + 1
            log.info(
                "processing.retry_in_place",
                topic=msg.topic(),
                partition=msg.partition(),
                offset=msg.offset(),
                left=retry.in_place - step.tries,
                error=describe_error(error),
            )
            return [Handle(msg, step.handler, step.attempt, step.raw, retry.in_place_delay, tries)]
        self.tries.pop(id(msg), None)
        return self._failure(msg, step.raw, error, step.attempt, ev.now)

    def _failure(
        self,
        msg: Message,
        raw: tuple[object, object],
        error: BaseException,
        attempt: int,
        now: int,
    ) -> list[Step]:
        """Count and log the failure; the Publish it takes, or Stop when it has nowhere to
        go (nothing committed past it)."""
        topic, partition, offset = msg.topic() or "", msg.partition() or 0, msg.offset() or 0
        self.observer.count(_observe.FAILURES, topic)
        hop = self.core.hop(msg, error, attempt, now)
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
            failure = ProcessingError(
                f"the record at {topic}[{partition}]@{offset} failed and there is no retry"
                f" or dead-letter topic: {describe_error(error)}"
            )
            failure.__cause__ = error
            return self._stop(failure)
        self.offsets.start((topic, partition), offset)
        ts_type, ts = msg.timestamp() if self.keep_timestamps else (0, 0)
        fields = (hop.topic, hop.partition, *raw, hop.headers, ts if ts_type else 0, hop.kind)
        return [Publish(msg, *fields, attempt, error)]

    def _acknowledged(self, ev: Acknowledged) -> list[Step]:
        pub, msg = ev.step, ev.step.record
        tp = (msg.topic() or "", msg.partition() or 0)
        offset = msg.offset() or 0
        if ev.error is None:
            self.offsets.settle(tp, offset)
            kind = _observe.DEAD_LETTERS if pub.kind == DEAD_LETTER else _observe.RETRIES
            self.observer.count(kind, tp[0])
            return _NO_STEPS
        self.observer.count(_observe.PUBLISH_FAILURES, tp[0])
        log.error(
            "processing.publish_failed",
            topic=tp[0],
            partition=tp[1],
            offset=offset,
            to=pub.topic,
            error=ev.error,
        )
        if self.offsets.is_open(tp, offset):  # (not when its partition went meanwhile)
            self._again.append((ev.now + AGAIN_AFTER_MS, msg, (pub.key, pub.value), pub.attempt))
        return _NO_STEPS

    # -- time, commits, rebalances, stopping ----------------------------------------------

    def _tick(self, ev: Tick) -> list[Step]:
        now = ev.now
        steps: list[Step] = []
        if self._last_commit is None:
            self._last_commit = now
        elif now - self._last_commit >= self.commit_interval_ms:
            self._last_commit = now
            if offsets := self.offsets.to_commit():
                steps.append(Commit(offsets, sync=False))
        if self.stopping:
            return steps
        if ready := [tp for tp, (due, _) in self.paused.items() if due <= now]:
            for tp in ready:
                del self.paused[tp]
            steps.append(Resume([TopicPartition(t, p) for t, p in ready]))
        if due := [e for e in self._again if e[0] <= now]:
            self._again = [e for e in self._again if e[0] > now]
            for _, msg, raw, attempt in due:
                msg.set_key(raw[0])
                msg.set_value(raw[1])
                self._one(msg, attempt, now, steps)
        return steps

    def _committed(self, ev: Committed) -> list[Step]:
        self.offsets.committed(list(ev.offsets))
        return _NO_STEPS

    def _assigned(self, ev: Assigned) -> list[Step]:
        for tp in ev.committed:
            if tp.error is None:
                self.offsets.restore((tp.topic, tp.partition), tp.offset, tp.metadata)
        return _NO_STEPS

    def _revoked(self, ev: Revoked) -> list[Step]:
        revoked = set(ev.partitions)
        offsets = self.offsets.to_commit(revoked)
        self._forget(revoked)
        return [Commit(offsets, sync=True)] if offsets else _NO_STEPS

    def _lost(self, ev: Lost) -> list[Step]:
        self._forget(set(ev.partitions))
        return _NO_STEPS

    def _forget(self, partitions: set[Partition]) -> None:
        self.offsets.forget(partitions)
        for tp in partitions:
            self.paused.pop(tp, None)
            self.sought.pop(tp, None)
        self._again = [e for e in self._again if (e[1].topic(), e[1].partition()) not in partitions]

    def _stoprequested(self, _ev: StopRequested) -> list[Step]:
        return self._stop(None)

    def _stop(self, error: BaseException | None) -> list[Step]:
        self.stopping = True
        return [Stop(error)]

    def _closing(self, ev: Closing) -> list[Step]:
        self.stopping = True
        steps: list[Step] = []
        if ev.unsent:  # their records stay uncommitted and are read again by the next run
            log.warning("processing.unpublished_at_stop", records=ev.unsent)
            steps.append(Purge())
        if offsets := self.offsets.to_commit():
            steps.append(Commit(offsets, sync=True))
        return steps
