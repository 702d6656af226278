"""Per-partition offsets safe to commit: past every record handled, never past one that is not.

A record is *settled* once its handler returned, or its failure was published and the broker
acknowledged it. Records may settle out of order (a publication still unacknowledged, or
handlers running concurrently): the committed offset of a partition stops at its oldest
unsettled record, and the records settled beyond it travel in the commit's metadata
(:func:`encode_done`), so a restart skips them instead of handling them again. A broker that
does not keep commit metadata loses only that: the records beyond are handled again.

Unsettled records are known one by one (:meth:`Offsets.start`, :meth:`Offsets.settle`), or
through *lanes* their caller keeps (:meth:`Offsets.add_lane`): queues whose records settle in
order, read only when a commit point is asked for. A record in a lane costs this module
nothing (the mirror's copies to one target partition: one per record, hundreds of thousands
a second).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from typing import Protocol

from confluent_kafka import TopicPartition

Partition = tuple[str, int]

PREFIX = "kheaders.done/1:"
"""Commit metadata written by this module (others' metadata is left alone, never read)."""
MAX_HOLES = 100_000
"""Unsettled records one commit's metadata may name (more: it is not read)."""
MAX_METADATA = 3000
"""Characters of commit metadata at most (Kafka's ``offset.metadata.max.bytes`` defaults to
4096): the runs that do not fit are left out, and their records handled again."""


def encode_done(base: int, not_done: list[int], high: int) -> str | None:
    """The records settled in ``[base, high)``, all but the sorted ``not_done`` offsets, as
    runs ``<not settled>+<settled>,...`` counted from ``base``; None when there are none.

    >>> encode_done(10, [10, 11, 15], 20)
    'kheaders.done/1:2+3,1+4'
    """
    runs: list[str] = []
    size = len(PREFIX)
    at = base
    i = 0
    while i < len(not_done) and at < high:
        gap_start = not_done[i]
        j = i
        while j + 1 < len(not_done) and not_done[j + 1] == not_done[j] + 1:
            j += 1
        gap_end = not_done[j] + 1
        done_end = not_done[j + 1] if j + 1 < len(not_done) else high
        if gap_start > at:  # settled records before the first gap: never, base is a gap
            break
        run = f"{gap_end - at}+{done_end - gap_end}"
        if done_end > gap_end:
            if size + len(run) + 1 > MAX_METADATA:
                break
            runs.append(run)
            size += len(run) + 1
        at = done_end
        i = j + 1
    return PREFIX + ",".join(runs) if runs else None


def decode_done(base: int, metadata: str | None) -> tuple[list[int], int] | None:
    """``(unsettled offsets in order, high)`` from commit metadata :func:`encode_done` wrote
    at ``base``; None for anything else (absent, another writer's, malformed, too large).

    >>> decode_done(10, 'kheaders.done/1:2+3,1+4')
    ([10, 11, 15], 20)
    """
    if not metadata or not metadata.startswith(PREFIX):
        return None
    holes: list[int] = []
    at = base
    try:
        for run in metadata[len(PREFIX) :].split(","):
            gap, _, done = run.partition("+")
            g, d = int(gap), int(done)
            if g < 0 or d < 1 or len(holes) + g > MAX_HOLES:
                return None
            holes.extend(range(at, at + g))
            at += g + d
    except ValueError:
        return None
    return holes, at


class Lane(Protocol):
    """Unsettled records of one partition whose caller settles them oldest first."""

    def oldest(self) -> int | None:
        """The offset of the oldest unsettled record (``None``: none)."""

    def unsettled(self) -> Iterator[int]:
        """Every unsettled record's offset."""

    def __len__(self) -> int:
        """How many records are unsettled."""


class Offsets:
    """Tracks started and settled records per partition; hands out what may be committed.

    Per partition: ``high``, one past the highest offset settled; every record below it is
    settled except those started and not settled (``open``) and those a previous run left
    unsettled and this one has not read yet (``holes``, restored from the commit metadata).
    """

    __slots__ = ("_committed", "_high", "_holes", "_lanes", "_open", "restoring")

    def __init__(self) -> None:
        self._high: dict[Partition, int] = {}
        self._lanes: dict[Partition, list[Lane]] = {}
        self._open: dict[Partition, set[int]] = {}
        """Only partitions with records open (the common case keeps no set at all)."""
        self._holes: dict[Partition, list[int]] = {}
        """Sorted; only for partitions restored with some."""
        self._committed: dict[Partition, tuple[int, str | None]] = {}
        self.restoring: set[Partition] = set()
        """Partitions whose records below ``high`` a previous run may have settled: each
        record read there goes through :meth:`arrived` (its short way is off meanwhile)."""

    def settled_now(self, tp: Partition, offset: int) -> None:
        """A record handled at once, in order (the common case: no bookkeeping per record
        unless a record of its partition is still open)."""
        if tp in self._open or tp in self._holes:
            self._settle(tp, offset)
        else:
            self._high[tp] = offset + 1

    def start(self, tp: Partition, offset: int) -> None:
        """A record whose outcome comes later (a publication, a concurrent handler)."""
        pending = self._open.get(tp)
        if pending is None:
            self._open[tp] = {offset}
        else:
            pending.add(offset)
        if self._holes:
            self._unhole(tp, offset)

    def _unhole(self, tp: Partition, offset: int) -> None:
        holes = self._holes.get(tp)
        if holes is None:
            return
        i = bisect_left(holes, offset)
        if i < len(holes) and holes[i] == offset:
            del holes[i]
        if not holes:
            del self._holes[tp]

    def settle(self, tp: Partition, offset: int) -> None:
        """A started record is done; ignored when its partition was forgotten meanwhile."""
        pending = self._open.get(tp)
        if pending is None:
            return
        try:  # (inline and short: once per record on the mirror's copy path)
            pending.remove(offset)
        except KeyError:
            return
        if not pending:
            del self._open[tp]
        if self._holes:
            self._unhole(tp, offset)
        high = self._high.get(tp)
        if high is None or offset >= high:
            self._high[tp] = offset + 1

    def _settle(self, tp: Partition, offset: int) -> None:
        pending = self._open.get(tp)
        if pending is not None:
            pending.discard(offset)
            if not pending:
                del self._open[tp]
        self._unhole(tp, offset)
        high = self._high.get(tp)
        if high is None or offset >= high:
            self._high[tp] = offset + 1

    def restore(self, tp: Partition, committed: int, metadata: str | None) -> None:
        """What the last commit of ``tp`` (at ``committed``) says a previous run settled
        beyond it; those records are skipped (see :meth:`arrived`)."""
        found = decode_done(committed, metadata) if committed >= 0 else None
        if found is None:
            return
        holes, high = found
        self._high[tp] = high
        self._holes[tp] = holes
        self._committed[tp] = (committed, metadata)
        self.restoring.add(tp)

    def arrived(self, tp: Partition, offset: int) -> bool:
        """A record of a :attr:`restoring` partition was read: True when a previous run
        settled it (skip it, it stays settled). Records the partition skipped over (control
        records, records compacted away) are no longer waited for."""
        high = self._high.get(tp, 0)
        holes = self._holes.get(tp)
        if holes is not None:
            passed = bisect_left(holes, offset)
            if passed:
                del holes[:passed]
            if not holes:
                del self._holes[tp]
                holes = None
        if offset >= high and holes is None:
            self.restoring.discard(tp)
            return False
        if offset >= high or (holes is not None and holes[0] == offset):
            return False
        pending = self._open.get(tp)
        return pending is None or offset not in pending

    def is_open(self, tp: Partition, offset: int) -> bool:
        """Whether the record at ``offset`` was started and is not settled yet."""
        pending = self._open.get(tp)
        return pending is not None and offset in pending

    def open_count(self) -> int:
        """Records started and not settled yet, over every partition."""
        in_lanes = sum(len(lane) for lanes in self._lanes.values() for lane in lanes)
        return sum(len(p) for p in self._open.values()) + in_lanes

    def add_lane(self, tp: Partition, lane: Lane) -> None:
        """Records of ``tp`` in ``lane`` are unsettled until it lets them go. A caller with
        lanes moves :attr:`high` itself, past each record it reads, before the record is
        in a lane (or started, or settled)."""
        self._lanes.setdefault(tp, []).append(lane)

    @property
    def high(self) -> dict[Partition, int]:
        """One past the highest offset settled (or read, by a caller with lanes), by
        partition: a caller with lanes stores into it, never lowering it."""
        return self._high

    def _point(self, tp: Partition, high: int) -> TopicPartition:
        pending = self._open.get(tp)
        lanes = self._lanes.get(tp, ())
        floor = min(pending) if pending else high
        for lane in lanes:
            oldest = lane.oldest()
            if oldest is not None and oldest < floor:
                floor = oldest
        if tp not in self._holes and floor >= high:
            return TopicPartition(tp[0], tp[1], high)  # in order: no sort, no metadata
        in_lanes = [o for lane in lanes for o in lane.unsettled()]
        not_done = sorted({*self._open.get(tp, ()), *self._holes.get(tp, ()), *in_lanes})
        below = not_done[: bisect_left(not_done, high)]  # (open records past high wait)
        if not below:
            return TopicPartition(tp[0], tp[1], high)
        metadata = encode_done(below[0], below, high)  # (None: nothing settled beyond)
        if metadata is None:
            return TopicPartition(tp[0], tp[1], below[0])
        return TopicPartition(tp[0], tp[1], below[0], metadata=metadata)

    def to_commit(self, partitions: set[Partition] | None = None) -> list[TopicPartition]:
        """Offsets (and metadata) that moved since the last commit (of ``partitions`` only,
        when given)."""
        out = []
        for tp, high in self._high.items():
            if partitions is not None and tp not in partitions:
                continue
            point = self._point(tp, high)
            if self._committed.get(tp) != (point.offset, point.metadata):
                out.append(point)
        return out

    def committed(self, offsets: list[TopicPartition]) -> None:
        """Note ``offsets`` as committed (so they are not committed again); partitions
        forgotten meanwhile are left out."""
        for tp in offsets:
            if (tp.topic, tp.partition) in self._high:
                self._committed[(tp.topic, tp.partition)] = (tp.offset, tp.metadata)

    def forget(self, partitions: set[Partition]) -> None:
        """Drop every record and offset of ``partitions`` (revoked)."""
        for tp in partitions:
            self._open.pop(tp, None)
            self._high.pop(tp, None)
            self._holes.pop(tp, None)
            self._committed.pop(tp, None)
            self._lanes.pop(tp, None)
            self.restoring.discard(tp)
