"""The events a processing driver feeds its :class:`~kheaders.processing._engine.Engine`,
and the steps the engine answers with. Plain data, never changed once made (not frozen only
because a frozen dataclass costs more to build, and one is built per record): no I/O, no
clock of their own (every event that needs the time carries ``now``, epoch milliseconds,
the driver's clock).

How a driver uses them (the sync :class:`~kheaders.processing.Processor` is the reference):

* after each read: ``Tick(now)`` (commit when due, resume partitions whose retry is due,
  records whose publication failed handled again), then ``Polled(records, now)``; a read that
  raised DeserializationError (unreadable headers) is ``Unreadable(error, now)``. Poll no
  longer than ``engine.wait(longest, now)``.
* each step, in order: ``HandleEach`` (call the handler on each record; report handled
  records with ``Handled``, in runs of any length (a concurrent driver's in any order), a
  failure with ``Failed(step.one(record), error, now)``), ``Handle`` (a record traced on its
  own, or an in-place retry: wait ``delay`` seconds unless stopped, call the handler, report
  ``Handled([record])`` or ``Failed(step, error, now)``; a failure is answered with the
  next in-place attempt, a ``Publish``, or ``Stop``), ``Publish`` (produce it; its
  acknowledgement is ``Acknowledged(step, None | reason, now)``), ``Pause`` (pause the
  partition and seek it back to the offset), ``Resume``, ``Commit`` (commit the offsets; on
  success ``Committed(offsets)``), ``Purge`` (drop publications not sent yet), ``Stop``
  (stop reading; raise ``error`` once shut down when it is set).
* nothing is started once ``engine.stopping`` is true (check it before each record).
* rebalances: ``Assigned(committed)`` with the committed offsets of the new partitions;
  on revoke, wait for pending publications first, then ``Revoked(partitions)`` (answers the
  final ``Commit``); ``Lost(partitions)`` commits nothing.
* ``StopRequested()`` when asked to stop; at shutdown, after waiting for publications,
  ``Closing(unsent, now)`` (answers ``Purge`` when some were left, then the final ``Commit``).

A share-group driver acknowledges instead of committing: accept on ``Handled``, reject once a
dead-letter ``Publish`` is acknowledged, release instead of carrying out a ``Publish`` whose
``kind`` is ``"retry"``, and it passes the broker's delivery count as ``Polled.attempts``.
An exactly-once driver carries ``Publish`` out inside its transaction, sends
``engine.commit_point()`` with it (``Committed`` once it commits; ``Acknowledged`` for its
publications then, or all as failed when it aborts) and leaves ``Tick``'s ``Commit`` steps
out.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from confluent_kafka import Message, TopicPartition

Partition = tuple[str, int]
Handler = Callable[[Message], Any]
Pairs = list[tuple[str, bytes | None]]

RETRY = "retry"
DEAD_LETTER = "dead-letter"

# -- events (driver -> engine) ---------------------------------------------------------------


@dataclass(slots=True)
class Polled:
    """Records (and error events) one read returned, in order. ``attempts``, when given, is
    each record's delivery attempt as the broker counts it (a share group's delivery count);
    otherwise the engine reads it from the retry headers."""

    records: Sequence[Message]
    now: int
    attempts: Sequence[int] | None = None


@dataclass(slots=True)
class Unreadable:
    """A read raised DeserializationError: a record the consumer could not read at all."""

    error: BaseException
    now: int


@dataclass(slots=True)
class Handled:
    """The handler returned for these records (a Handle's record, or a run of HandleEach)."""

    records: Sequence[Message]


@dataclass(slots=True)
class Failed:
    """The handler of ``step`` raised ``error``."""

    step: Handle
    error: BaseException
    now: int


@dataclass(slots=True)
class Acknowledged:
    """The broker's answer to a Publish: ``error`` None when written, else why not."""

    step: Publish
    error: str | None
    now: int


@dataclass(slots=True)
class Committed:
    """A Commit step's offsets were committed."""

    offsets: Sequence[TopicPartition]


@dataclass(slots=True)
class Assigned:
    """New partitions, with their committed offsets (and metadata) as the group has them."""

    committed: Sequence[TopicPartition]


@dataclass(slots=True)
class Revoked:
    """Partitions taken away cleanly (pending publications already waited for)."""

    partitions: Collection[Partition]


@dataclass(slots=True)
class Lost:
    """Partitions lost (another member may own them already): nothing is committed."""

    partitions: Collection[Partition]


@dataclass(slots=True)
class Tick:
    """The time, after each read (and whenever the driver wakes)."""

    now: int


@dataclass(slots=True)
class StopRequested:
    """``stop()`` was called (or a signal came)."""


@dataclass(slots=True)
class Closing:
    """Shutting down: ``unsent`` publications were still unacknowledged after waiting."""

    unsent: int
    now: int


Event = (
    Polled | Unreadable | Handled | Failed | Acknowledged | Committed | Assigned | Revoked | Lost
    | Tick | StopRequested | Closing
)  # fmt: skip
EVENTS: tuple[type, ...] = get_args(Event)

# -- steps (engine -> driver) ----------------------------------------------------------------


@dataclass(slots=True)
class Handle:
    """Call ``handler(record)`` (after ``delay`` seconds: an in-place retry; a stop during
    the wait drops the step: the record is left for the next run). ``raw`` is the consumed
    key and value (the record holds the deserialized ones); ``tries``: in-place attempts
    already made for this delivery."""

    record: Message
    handler: Handler
    attempt: int
    raw: tuple[object, object]
    delay: float = 0.0
    tries: int = 0


@dataclass(slots=True)
class HandleEach:
    """Call ``handler`` on each record in order: a run of records due now, each attempt
    ``attempt``, no delay (the common case: no step per record). ``raws``: each record's
    consumed key and value when the records hold deserialized ones."""

    records: list[Message]
    handler: Handler
    attempt: int = 1
    raws: list[tuple[object, object]] | None = None

    def one(self, record: Message) -> Handle:
        """The Handle a failure of ``record`` is reported with."""
        raws = self.raws
        raw = raws[self.records.index(record)] if raws else (record.key(), record.value())
        return Handle(record, self.handler, self.attempt, raw)


@dataclass(slots=True)
class Publish:
    """Produce a failed record's consumed bytes to its next topic (``partition`` -1: by key)
    with ``headers`` and ``timestamp`` (0: the producer stamps it). ``kind`` is ``retry`` or
    ``dead-letter``; ``attempt`` the failed one."""

    record: Message
    topic: str
    partition: int
    key: object
    value: object
    headers: Pairs
    timestamp: int
    kind: str
    attempt: int
    error: BaseException | None = field(repr=False, compare=False, default=None)


@dataclass(slots=True)
class Pause:
    """Pause ``partition`` and seek it back to its offset: the record there is due at
    ``due`` (epoch ms); the engine answers Resume then."""

    partition: TopicPartition
    due: int


@dataclass(slots=True)
class Resume:
    """Resume these paused partitions."""

    partitions: list[TopicPartition]


@dataclass(slots=True)
class Commit:
    """Commit ``offsets`` (with their metadata); ``sync`` to wait for the answer."""

    offsets: list[TopicPartition]
    sync: bool


@dataclass(slots=True)
class Purge:
    """Drop the publications not sent yet (their records stay uncommitted)."""


@dataclass(slots=True)
class Stop:
    """Stop reading; raise ``error`` from ``run()`` once shut down (when set)."""

    error: BaseException | None = None


Step = Handle | HandleEach | Publish | Pause | Resume | Commit | Purge | Stop
