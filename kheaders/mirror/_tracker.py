"""Which source offsets may be committed: only those below the first record not yet done.

A record is done once every copy of it was acknowledged (by the target, or by the
dead-letter topic), or at once when it has no copy to make (dropped, or a loop). Records
finish out of order (several target partitions, retries); the commit point of a partition
only moves past a record when it and every record before it are done.

Two kinds of bookkeeping, one commit point:

- a :class:`Stream` holds, in produce order, the source records whose copies went to one
  fixed target partition by one route. An idempotent producer acknowledges the records of a
  partition in the order they were produced, so the stream's single delivery callback takes
  the oldest record off its queue: no object and no closure per record;
- a :class:`Pending` is one record tracked on its own (a copy sent again after an error, a
  dead letter, a copy whose target partition the producer chooses), with its own callback.

A partition's commit point is the oldest record still queued in one of its streams or still
pending, or else the offset after the last record read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any


class Pending:
    """One source record in flight on its own: how many copies are still unacknowledged."""

    __slots__ = ("message", "offset", "remaining", "route", "track")

    def __init__(
        self, track: PartitionTrack, offset: int, message: Any, route: str, remaining: int
    ) -> None:
        self.track = track
        self.offset = offset
        self.message = message
        self.route = route
        self.remaining = remaining


Failed = Callable[["Stream", Any, Any], None]
"""Called with the stream, the source record and the delivery error of a copy that failed."""


class Stream:
    """The source records copied, in produce order, to one target partition by one route.

    :meth:`delivered` is the producer's ``on_delivery`` for every copy in the stream: it relies
    on reports arriving in produce order within a partition (an idempotent producer).
    """

    __slots__ = ("acked", "failed", "queue", "route", "target", "target_partition", "track")

    def __init__(
        self, track: PartitionTrack, route: str, target: str, target_partition: int, failed: Failed
    ) -> None:
        self.track = track
        self.route = route
        self.target = target
        self.target_partition = target_partition
        self.failed = failed
        self.queue: deque[Any] = deque()
        """The source records whose copies are not acknowledged yet, oldest first."""
        self.acked = 0
        """Copies acknowledged since the counts were last taken (see :meth:`take_acked`)."""

    def delivered(self, error: Any, _report: Any) -> None:
        """The producer's report for the oldest copy in the stream."""
        msg = self.queue.popleft()
        if error is None:
            self.acked += 1
        else:
            self.failed(self, msg, error)

    def take_acked(self) -> int:
        """The copies acknowledged since the last call."""
        acked, self.acked = self.acked, 0
        return acked


class PartitionTrack:
    """The records of one source partition still in flight, and its commit point."""

    __slots__ = ("committed", "pending", "position", "streams")

    def __init__(self) -> None:
        self.streams: list[Stream] = []
        self.pending: dict[int, Pending] = {}
        """Records tracked on their own, by offset."""
        self.committed: int | None = None
        """The offset last committed for this partition (by the mirror)."""
        self.position: int | None = None
        """The offset after the last record read."""

    def in_flight(self) -> int:
        """Records of this partition with a copy not yet acknowledged."""
        return sum(len(s.queue) for s in self.streams) + len(self.pending)

    def add(self, pending: Pending) -> None:
        """Track ``pending`` on its own until its copies are done."""
        if pending.remaining > 0:
            self.pending[pending.offset] = pending

    def finish_one(self, pending: Pending) -> None:
        """One copy of ``pending`` was acknowledged."""
        pending.remaining -= 1
        if pending.remaining <= 0:
            self.pending.pop(pending.offset, None)

    def done_upto(self) -> int | None:
        """The offset after the records that and all before them are done (``None``: none read)."""
        upto = self.position
        if upto is None:
            return None
        for stream in self.streams:
            if stream.queue:
                upto = min(upto, stream.queue[0].offset())
        if self.pending:
            upto = min(upto, *self.pending)
        return upto

    def to_commit(self) -> int | None:
        """The offset to commit now, or ``None`` when nothing new is done."""
        upto = self.done_upto()
        if upto is None or upto == self.committed:
            return None
        return upto
