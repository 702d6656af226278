"""Which source record an acknowledgement belongs to; what may be committed is
:class:`kheaders._offsets.Offsets`' to say (the processors' tracker).

A record is settled there once every copy of it was acknowledged (by the target, or by the
dead-letter topic), or at once when it has no copy to make (dropped, or a loop). Two kinds of
delivery bookkeeping feed it:

- a :class:`Stream` holds, in produce order, the source records whose copies went to one
  fixed target partition by one route. An idempotent producer acknowledges the records of a
  partition in the order they were produced, so the stream's single delivery callback takes
  the oldest record off its queue: no object and no closure per record. It is one of the
  offsets' lanes (:meth:`kheaders._offsets.Offsets.add_lane`): a record leaves it settled,
  with nothing said to the offsets;
- a :class:`Pending` is one record tracked on its own (several copies, a copy sent again after
  an error, a dead letter, a copy whose target partition the producer chooses): it settles
  once its last copy is acknowledged.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from kheaders._offsets import Offsets

Key = tuple[str, int, int]
"""A source record: topic, partition, offset."""


class Pending:
    """One source record in flight on its own: how many copies are still unacknowledged."""

    __slots__ = ("held", "key", "message", "offsets", "remaining", "route")

    def __init__(
        self, held: dict[Key, Pending], offsets: Offsets, key: Key, message: Any, route: str
    ) -> None:
        self.held = held
        self.offsets = offsets
        self.key = key
        self.message = message
        self.route = route
        self.remaining = 0

    @property
    def offset(self) -> int:
        return self.key[2]

    def finish_one(self) -> None:
        """One copy was acknowledged: the record settles with its last."""
        self.remaining -= 1
        if self.remaining <= 0:
            key = self.key
            if self.held.get(key) is self:
                del self.held[key]
            self.offsets.settle((key[0], key[1]), key[2])


Failed = Callable[["Stream", Any, Any], None]
"""Called with the stream, the source record and the delivery error of a copy that failed."""


class Stream:
    """The source records copied, in produce order, to one target partition by one route.

    :meth:`delivered` is the producer's ``on_delivery`` for every copy in the stream: it relies
    on reports arriving in produce order within a partition (an idempotent producer).
    """

    __slots__ = (
        "acked", "failed", "held", "queue", "route", "source", "target", "target_partition",
    )  # fmt: skip

    def __init__(
        self,
        source: tuple[str, int],
        route: str,
        target: str,
        target_partition: int,
        *,
        failed: Failed,
        held: dict[Key, Pending],
    ) -> None:
        self.source = source
        self.route = route
        self.target = target
        self.target_partition = target_partition
        self.failed = failed
        self.held = held
        self.queue: deque[Any] = deque()
        """The source records whose copies are not acknowledged yet, oldest first."""
        self.acked = 0
        """Copies acknowledged since the counts were last taken (see :meth:`take_acked`)."""

    def delivered(self, error: Any, _report: Any) -> None:
        """The producer's report for the oldest copy in the stream."""
        msg = self.queue.popleft()
        if error is not None:
            self.failed(self, msg, error)
            return
        self.acked += 1
        held = self.held
        if held:  # the record has other copies (or retries) tracked on its own
            pending = held.get((*self.source, msg.offset()))
            if pending is not None:
                pending.finish_one()

    def oldest(self) -> int | None:
        """The oldest source record with its copy in this stream unacknowledged."""
        queue = self.queue
        return queue[0].offset() if queue else None

    def unsettled(self) -> Iterator[int]:
        """Every source record with its copy in this stream unacknowledged."""
        return (msg.offset() for msg in self.queue)

    def __len__(self) -> int:
        return len(self.queue)

    def take_acked(self) -> int:
        """The copies acknowledged since the last call."""
        acked, self.acked = self.acked, 0
        return acked
