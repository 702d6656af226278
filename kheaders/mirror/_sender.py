"""The mirror's copy path: each record read is routed, produced to the target and tracked
until acknowledged, sent again after a target's error, or dead-lettered.

A copy to a fixed target partition from an idempotent producer joins a :class:`Stream` (one
callback bound per stream, reports in produce order); any other copy (a partition the producer
chooses by key, a producer without idempotence, a copy sent again) is a :class:`Pending` with
a callback of its own. What may be committed is :class:`Offsets`' to say: a record is started
when read with copies to make, settled when the last is acknowledged (or at once without one).
"""

from __future__ import annotations

import functools
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, Message
from opentelemetry.trace import Tracer

from kheaders._log import get_logger
from kheaders._model.received import HEADER_FAILURES, call_headers, unreadable_headers
from kheaders._offsets import Offsets
from kheaders.mirror import _metrics
from kheaders.mirror._copy import LOOP, Copier, HeaderList, RefusedHopsError
from kheaders.mirror._deadletters import REFUSED, TOO_LARGE, DeadLetters
from kheaders.mirror._metrics import MirrorStats
from kheaders.mirror._setup import Plan
from kheaders.mirror._tracing import link_record, start_batch_span
from kheaders.mirror._tracker import Key, Pending, Stream

_log = get_logger("kheaders.mirror")

LINKS_PER_SPAN = 128
"""Records per batch span when tracing records (OpenTelemetry SDK's default link limit)."""
_NO_TIMESTAMP = confluent_kafka.TIMESTAMP_NOT_AVAILABLE
_UNREADABLE = "a header key is not UTF-8: the target client cannot carry it"


class Sender:
    """Copies records through ``producer`` (the target's) and tracks them by source partition.

    ``in_order``: the producer is idempotent (its reports come in produce order within a
    partition), so copies to a fixed partition may share a :class:`Stream`.
    """

    def __init__(
        self,
        plan: Plan,
        copier: Copier,
        producer: Any,
        dead: DeadLetters,
        *,
        stats: MirrorStats,
        tracer: Tracer,
        same_partition: bool,
        in_order: bool,
    ) -> None:
        self.plan = plan
        self.copier = copier
        self.producer = producer
        self.dead = dead
        self.stats = stats
        self.tracer = tracer
        self.same_partition = same_partition
        self.in_order = in_order
        self.offsets = Offsets()
        self.positions = self.offsets.high
        """The offset after the last record read, by source partition (the records read
        are settled, held, or in a stream: the streams are the offsets' lanes)."""
        self.held: dict[Key, Pending] = {}
        """Records tracked on their own (see :class:`Pending`)."""
        self.streams: dict[tuple[str, int, str, str], Stream] = {}
        self.retries: list[tuple[Pending, str]] = []
        self.own_in_flight = 0
        """Copies with a callback of their own handed to the producer, not yet acknowledged."""
        self.fatal: KafkaError | None = None
        self._partitions: dict[tuple[str, int], int] = {}

    @property
    def in_flight(self) -> int:
        """Copies handed to the target producer and not yet acknowledged."""
        streams = tuple(self.streams.values())  # one C call: safe from another thread
        return self.own_in_flight + sum(len(s.queue) for s in streams)

    def copy_batch(self, batch: list[Message]) -> None:
        """Copy each record of ``batch`` (a consume error is logged; a fatal one raised)."""
        start = 0
        while start < len(batch):
            chunk = batch[start:]
            span = start_batch_span(self.tracer, self.plan.source_id, self.plan.target_id, chunk)
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
                    self._copy(msg, span if recording else None)
            finally:
                span.end()

    def _copy(self, msg: Message, span: Any) -> None:
        topic: str = msg.topic()  # type: ignore[assignment]
        partition: int = msg.partition()  # type: ignore[assignment]
        offset: int = msg.offset()  # type: ignore[assignment]
        tp = (topic, partition)
        offsets = self.offsets
        restoring = offsets.restoring and tp in offsets.restoring
        if restoring:  # (rare: each record is held, so it unholes as it settles)
            if offsets.arrived(tp, offset):
                return  # a previous run copied it (the commit's metadata says so)
            if offset >= self.positions.get(tp, 0):
                self.positions[tp] = offset + 1
        else:
            self.positions[tp] = offset + 1
        try:
            headers = call_headers(msg)
        except HEADER_FAILURES as exc:
            unreadable_headers(msg, exc)
            self.dead.send(self._hold(msg, _metrics.NO_ROUTE), _UNREADABLE)
            return
        if span is not None and headers:
            link_record(span, msg, headers)
        try:
            route, targets, out = self.copier.prepare(topic, partition, offset, headers)
        except RefusedHopsError as exc:
            self.dead.send(self._hold(msg, _metrics.NO_ROUTE), str(exc))
            return
        if not targets:
            self.offsets.settled_now(tp, offset)
            self.stats.add(route, _metrics.LOOPED if route == LOOP else _metrics.DROPPED, topic)
            return
        held = self._hold(msg, route, len(targets)) if restoring or len(targets) > 1 else None
        streams = self.streams
        produce = self.producer.produce
        ts_type, ts = msg.timestamp()
        value, key = msg.value(), msg.key()
        for target in targets:
            stream = streams.get((topic, partition, route, target))
            if stream is None:
                stream = self._stream(topic, partition, route, target)
            if stream is None:
                self._send_own(held or self._hold(msg, route), target, out)
                continue
            try:  # the common case inline; a full queue or a refusal: _produce
                produce(
                    target,
                    value,
                    key,
                    stream.target_partition,
                    on_delivery=stream.delivered,
                    timestamp=ts if ts_type != _NO_TIMESTAMP else 0,
                    headers=out,
                )
            except (BufferError, KafkaException):
                if not self._produce(msg, target, stream.target_partition, stream.delivered, out):
                    self.dead.send(held or self._hold(msg, route), _too_large(target))
                    continue
            stream.queue.append(msg)

    def _stream(self, topic: str, partition: int, route: str, target: str) -> Stream | None:
        """The stream of copies from ``topic``/``partition`` to ``target`` by ``route``
        (``None``: these copies are tracked one by one)."""
        target_partition = self._target_partition(target, partition)
        if not self.in_order or target_partition < 0:
            return None
        source = (topic, partition)
        failed, held = self._stream_failed, self.held
        stream = Stream(source, route, target, target_partition, failed=failed, held=held)
        self.streams[(topic, partition, route, target)] = stream
        self.offsets.add_lane(source, stream)
        return stream

    def _target_partition(self, target: str, partition: int) -> int:
        """The partition to write: the source's number where the target has it (``same``),
        else -1 (the partitioner: murmur2 of the key)."""
        found = self._partitions.get((target, partition))
        if found is None:
            has_it = partition < self.plan.target_partitions.get(target, 0)
            found = partition if self.same_partition and has_it else -1
            self._partitions[(target, partition)] = found
        return found

    def _hold(self, msg: Message, route: str, copies: int = 1) -> Pending:
        """The record tracked on its own (and started), with ``copies`` more to finish."""
        key: Key = (msg.topic(), msg.partition(), msg.offset())  # type: ignore[assignment]
        pending = self.held.get(key)
        if pending is None:
            pending = self.held[key] = Pending(self.held, self.offsets, key, msg, route)
            self.offsets.start((key[0], key[1]), key[2])
        pending.remaining += copies
        return pending

    def _produce(
        self, msg: Message, target: str, partition: int, delivered: Any, out: HeaderList
    ) -> bool:
        """Produce one copy (waiting while the producer's queue is full); ``False`` when it is
        too large for the target. Raises KafkaException for another refusal."""
        ts_type, ts = msg.timestamp()
        while True:
            try:
                self.producer.produce(
                    target,
                    msg.value(),
                    msg.key(),
                    partition,
                    on_delivery=delivered,
                    timestamp=ts if ts_type != _NO_TIMESTAMP else 0,
                    headers=out,
                )
                return True
            except BufferError:
                self.producer.poll(0.1)
            except KafkaException as exc:
                if exc.args[0].code() not in TOO_LARGE:
                    raise
                return False

    def _send_own(self, pending: Pending, target: str, out: HeaderList) -> None:
        """Produce one copy of ``pending``'s record with a callback of its own."""
        msg = pending.message
        partition = self._target_partition(target, msg.partition())
        delivered = functools.partial(self._delivered_own, pending, target)
        if self._produce(msg, target, partition, delivered, out):
            self.own_in_flight += 1
        else:
            self.dead.send(pending, _too_large(target))

    def _delivered_own(self, pending: Pending, target: str, error: Any, _report: Any) -> None:
        self.own_in_flight -= 1
        if error is None:
            self.stats.add(pending.route, _metrics.SENT, pending.message.topic() or "", target)
            pending.finish_one()
        else:
            self._failed(pending, target, error)

    def _stream_failed(self, stream: Stream, msg: Message, error: Any) -> None:
        offset: int = msg.offset()  # type: ignore[assignment]
        pending = self.held.get((*stream.source, offset))  # counts this copy already
        self._failed(pending or self._hold(msg, stream.route), stream.target, error)

    def _failed(self, pending: Pending, target: str, error: Any) -> None:
        """A copy of ``pending``'s record was not delivered: stop, dead-letter or send again."""
        if error.fatal():  # the producer is unusable: stop, committing nothing past it
            self.fatal = error
        elif error.code() in REFUSED:
            self.dead.send(pending, f"the target refused it ({error.name()}, to {target!r})")
        else:  # the target had a problem, not the record: send it again
            source = pending.message.topic() or ""
            self.stats.add(pending.route, _metrics.RETRIED, source, target)
            self.retries.append((pending, target))

    def send_retries(self) -> None:
        """Send again the copies whose delivery failed for the target's sake."""
        retries, self.retries = self.retries, []
        for pending, target in retries:
            msg = pending.message
            headers = call_headers(msg)
            _, _, out = self.copier.prepare(msg.topic(), msg.partition(), pending.offset, headers)
            self._send_own(pending, target, out)

    def count_acknowledged(self) -> None:
        """Add the streams' acknowledged copies to the counts."""
        counts = self.stats.counts
        for (topic, _, route, target), stream in self.streams.items():
            acked = stream.take_acked()
            if acked:
                key = (route, _metrics.SENT, topic, target)
                counts[key] = counts.get(key, 0) + acked

    def forget(self, partitions: set[tuple[str, int]]) -> None:
        """Stop tracking ``partitions`` (revoked or lost)."""
        self.count_acknowledged()
        self.offsets.forget(partitions)
        for record in [k for k in self.held if (k[0], k[1]) in partitions]:
            del self.held[record]
        for key in [k for k in self.streams if (k[0], k[1]) in partitions]:
            del self.streams[key]


def _too_large(target: str) -> str:
    return f"over the target's size limit (to {target!r})"
