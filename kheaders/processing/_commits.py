"""Per-partition offsets safe to commit: past every record handled, never past one that is not.

A record is *settled* once its handler returned, or its failure was published and the broker
acknowledged it. Records may settle out of order (a publication still unacknowledged, or
handlers running concurrently): the committable offset of a partition stops at its oldest
unsettled record.
"""

from __future__ import annotations

from confluent_kafka import TopicPartition

Partition = tuple[str, int]


class Offsets:
    """Tracks started and settled records per partition; hands out what may be committed."""

    __slots__ = ("_ahead", "_committed", "_open", "_ready")

    def __init__(self) -> None:
        self._ready: dict[Partition, int] = {}
        """Next offset to commit per partition (one past the last settled in a row)."""
        self._open: dict[Partition, dict[int, bool]] = {}
        """Records started and not yet in a settled row: offset -> settled, kept in offset
        order (a record handed late is sorted in)."""
        self._committed: dict[Partition, int] = {}
        self._ahead: dict[Partition, int] = {}
        """Where a partition's offset was before a record older than it started (one a
        consumer handed late): restored once that record and every open one settled."""

    def settled_now(self, tp: Partition, offset: int) -> None:
        """A record handled at once, in order (the common case: no bookkeeping per record
        unless an earlier record of its partition is still open)."""
        pending = self._open.get(tp)
        if pending:
            pending[offset] = True
            self._drain(tp, pending)
        else:
            self._ready[tp] = offset + 1

    def start(self, tp: Partition, offset: int) -> None:
        """A record whose outcome comes later (a publication, a concurrent handler)."""
        pending = self._open.get(tp)
        if pending is None:
            pending = self._open[tp] = {}
        if pending and offset not in pending and offset < next(reversed(pending)):
            pending[offset] = False  # out of order (handed late): keep the dict sorted
            self._open[tp] = dict(sorted(pending.items()))
        else:
            pending[offset] = False
        ready = self._ready.get(tp)
        if ready is not None and ready > offset:  # handed after newer records settled
            self._ahead[tp] = max(ready, self._ahead.get(tp, ready))
            self._ready[tp] = offset

    def settle(self, tp: Partition, offset: int) -> None:
        """A started record is done; ignored when its partition was forgotten meanwhile."""
        pending = self._open.get(tp)
        if pending is None or offset not in pending:
            return
        pending[offset] = True
        self._drain(tp, pending)

    def _drain(self, tp: Partition, pending: dict[int, bool]) -> None:
        """Drop the settled records at the front (offsets in order); move the offset."""
        last = None
        while pending:
            first = next(iter(pending))
            if not pending[first]:
                break
            del pending[first]
            last = first
        if last is None:
            return
        ready = last + 1
        if not pending and tp in self._ahead:
            ready = max(ready, self._ahead.pop(tp))
        self._ready[tp] = ready

    def rewind(self, tp: Partition, offset: int) -> None:
        """Forget the records of ``tp`` from ``offset`` on: they will be read again."""
        pending = self._open.get(tp)
        if pending:
            for o in [o for o in pending if o >= offset]:
                del pending[o]

    def open_count(self) -> int:
        """Records started and not settled yet, over every partition."""
        return sum(1 for p in self._open.values() for done in p.values() if not done)

    def to_commit(self, partitions: set[Partition] | None = None) -> list[TopicPartition]:
        """Offsets that moved since the last commit (of ``partitions`` only, when given)."""
        out = []
        for tp, offset in self._ready.items():
            if partitions is not None and tp not in partitions:
                continue
            if self._committed.get(tp) != offset:
                out.append(TopicPartition(tp[0], tp[1], offset))
        return out

    def committed(self, offsets: list[TopicPartition]) -> None:
        """Note ``offsets`` as committed (so they are not committed again)."""
        for tp in offsets:
            self._committed[(tp.topic, tp.partition)] = tp.offset

    def forget(self, partitions: set[Partition]) -> None:
        """Drop every record and offset of ``partitions`` (revoked)."""
        for tp in partitions:
            self._open.pop(tp, None)
            self._ready.pop(tp, None)
            self._committed.pop(tp, None)
            self._ahead.pop(tp, None)
