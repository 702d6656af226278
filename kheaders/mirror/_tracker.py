"""Which source offsets may be committed: only those below the first record not yet done.

A record is done once every copy of it was acknowledged (by the target, or by the
dead-letter topic), or at once when it has no copy to make (dropped, or a loop). Records
finish out of order (several target partitions, retries); the commit point of a partition
only moves past a record when it and every record before it are done.
"""

from __future__ import annotations

from typing import Any


class Pending:
    """One source record in flight: how many copies are still unacknowledged."""

    __slots__ = ("key", "message", "offset", "remaining", "route", "track")

    def __init__(
        self, track: PartitionTrack, offset: int, message: Any, route: str, remaining: int
    ) -> None:
        self.track = track
        self.offset = offset
        self.message = message
        self.route = route
        self.remaining = remaining


class PartitionTrack:
    """The records of one source partition in consumption order, and its commit point."""

    __slots__ = ("_open", "committed", "done_upto", "position")

    def __init__(self) -> None:
        self._open: dict[int, Pending] = {}
        self.done_upto: int | None = None
        """The offset after the last record that and all before it are done."""
        self.committed: int | None = None
        """The offset last committed for this partition (by the mirror)."""
        self.position: int | None = None
        """The offset after the last record read."""

    def __len__(self) -> int:
        return len(self._open)

    def add(self, pending: Pending) -> None:
        """Track ``pending`` (records are added in offset order)."""
        self._open[pending.offset] = pending
        if pending.remaining == 0:
            self.advance()

    def finish_one(self, pending: Pending) -> None:
        """One copy of ``pending`` was acknowledged."""
        pending.remaining -= 1
        if pending.remaining <= 0:
            self.advance()

    def advance(self) -> None:
        """Move the commit point past the records now done at the front."""
        open_ = self._open
        while open_:
            offset = next(iter(open_))
            if open_[offset].remaining > 0:
                return
            del open_[offset]
            self.done_upto = offset + 1

    def to_commit(self) -> int | None:
        """The offset to commit now, or ``None`` when nothing new is done."""
        upto = self.done_upto
        if upto is None or upto == self.committed:
            return None
        return upto
