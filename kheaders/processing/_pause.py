"""Partitions of retry topics held back until their next record is due.

A retry record read before its due time is not handled: its partition is paused and sought
back to it, and resumed once the time has come. The poll loop keeps polling meanwhile (the
group membership stays alive) and every other partition keeps flowing.
"""

from __future__ import annotations

import time

from confluent_kafka import TopicPartition

Partition = tuple[str, int]


def now_ms() -> int:
    """Wall-clock epoch milliseconds (due times are wall-clock: they cross processes)."""
    return time.time_ns() // 1_000_000


class Paused:
    """Paused partitions and when each is due again."""

    __slots__ = ("_due",)

    def __init__(self) -> None:
        self._due: dict[Partition, tuple[int, int]] = {}
        """partition -> (due epoch ms, offset sought back to)."""

    def __contains__(self, tp: object) -> bool:
        return tp in self._due

    def __len__(self) -> int:
        return len(self._due)

    def hold(self, tp: Partition, offset: int, due_ms: int) -> TopicPartition:
        """Note ``tp`` paused at ``offset`` until ``due_ms``; the TopicPartition to seek to."""
        self._due[tp] = (due_ms, offset)
        return TopicPartition(tp[0], tp[1], offset)

    def due(self, at_ms: int | None = None) -> list[TopicPartition]:
        """Partitions whose time has come (removed from the book): resume them."""
        if not self._due:
            return []
        at = now_ms() if at_ms is None else at_ms
        ready = [tp for tp, (due, _) in self._due.items() if due <= at]
        for tp in ready:
            del self._due[tp]
        return [TopicPartition(t, p) for t, p in ready]

    def wait(self, longest: float, at_ms: int | None = None) -> float:
        """Seconds a poll may block: ``longest``, or less when a partition is due sooner."""
        if not self._due:
            return longest
        at = now_ms() if at_ms is None else at_ms
        soonest = min(due for due, _ in self._due.values())
        return max(0.0, min(longest, (soonest - at) / 1000))

    def forget(self, partitions: set[Partition]) -> None:
        """Drop ``partitions`` (revoked: a new owner starts from the committed offset)."""
        for tp in partitions:
            self._due.pop(tp, None)
