"""Which delivery of a record a handler is on: :func:`delivery` and :class:`Delivery`.

A handler gets the consumed ``Message`` (a confluent-kafka type that takes no attributes), so
the delivery is asked for with the record: ``delivery(msg)``. The processor running the
handler is found through a context variable set once per ``run()``: nothing is done per
record until a handler asks.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from confluent_kafka import Message

from kheaders._errors import ProcessingError
from kheaders.deadletter import spring as sh
from kheaders.deadletter._read import SPRING_ORIGIN, origin
from kheaders.processing._core import record_headers

if TYPE_CHECKING:
    from kheaders.processing._core import Core


class _Running(Protocol):
    _core: Core

    def _in_place_try(self, msg: Message) -> int: ...


RUNNING: ContextVar[_Running | None] = ContextVar("kheaders.processing.running", default=None)
"""The processor whose ``run()`` the current thread or task is inside."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """A handler's view of the record in hand: which attempt this is, and where the record
    was first consumed from (the same for every attempt).

    ``attempt`` is 1 on the main topic and the ``retry_topic-attempts`` value on a retry
    topic (2 on the first retry); ``max_attempts`` is ``1 + len(RetryTopics.delays)`` (1
    without retry topics): a failure at ``attempt == max_attempts`` goes to the dead-letter
    topic. ``in_place`` counts the quick attempts in place already made for this delivery
    (0 on the first call; ``RetryTopics.in_place`` at most). ``topic``, ``partition``,
    ``offset`` and ``timestamp`` (epoch ms, None when unknown) are the original record's:
    from the ``kafka_original-*`` headers on a retry topic, the record's own on its topic.
    """

    attempt: int
    max_attempts: int
    in_place: int
    topic: str
    partition: int
    offset: int
    timestamp: int | None

    @property
    def retried(self) -> bool:
        """Whether an earlier attempt of this record failed (on a topic or in place)."""
        return self.attempt > 1 or self.in_place > 0


def delivery(msg: Message) -> Delivery:
    """The :class:`Delivery` of ``msg``, the record a processor's handler was called with.

    Raises ProcessingError when called outside a processor's ``run()``.
    """
    running = RUNNING.get()
    if running is None:
        raise ProcessingError(
            "delivery(msg) answers inside the handler of a running Processor or AIOProcessor"
        )
    core = running._core
    topic, partition, offset = msg.topic() or "", msg.partition() or 0, msg.offset() or 0
    ts_type, ts = msg.timestamp()
    timestamp: int | None = ts if ts_type in sh.TIMESTAMP_TYPES else None
    attempt = 1
    if topic in core.retry_topics:
        last = dict(record_headers(msg))
        attempt = sh.decode_attempts(last.get(sh.ATTEMPTS))
        name, where, at = origin(last, (SPRING_ORIGIN,)) or (b"", None, None)
        if name and where is not None and at is not None:  # all three, well formed
            topic, partition, offset = name.decode("utf-8", "replace"), where, at
            first = sh.decode_fixed(last.get(sh.ORIGINAL_TIMESTAMP), 8)
            timestamp = first if first is not None and first >= 0 else None
    retry = core.retry
    return Delivery(
        attempt=attempt,
        max_attempts=retry.max_attempts if retry is not None else 1,
        in_place=running._in_place_try(msg),
        topic=topic,
        partition=partition,
        offset=offset,
        timestamp=timestamp,
    )
