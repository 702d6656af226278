"""A processor's per-record rules, read by its engine: which handler, whether a record is
due, how to deserialize it, and where a failure goes next."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from confluent_kafka import Message

from kheaders._client.deserializing import deserialize
from kheaders._errors import ConfigurationError
from kheaders._model.headers import Headers
from kheaders.deadletter import KHEADERS, DeadLetter, dead_letter_headers, spring_headers
from kheaders.deadletter import spring as sh
from kheaders.deadletter._write import Pairs
from kheaders.processing._retry import RetryTopics, route_map
from kheaders.processing._steps import DEAD_LETTER, RETRY

HeadersFilter = Callable[[Headers], bool]
"""``filter=``: given a record's headers, True to handle it, False to skip (and commit) it."""

MIN_LONGEST_WAIT = 60.0
"""Seconds: the least of the longest wait a retry record may ask (10x the longest delay)."""


class Hop(NamedTuple):
    """Where a failed record is republished: topic, partition (-1: by key), headers."""

    topic: str
    partition: int
    headers: Pairs
    kind: str
    """``retry`` or ``dead-letter``."""
    next_attempt: int


class Core:
    """A processor's per-record rules, free of I/O.

    Raises ConfigurationError for ``handlers`` without ``route_by`` (or the reverse), or no
    handler at all (the topics are the driver's to check).
    """

    def __init__(
        self,
        topics: Sequence[str],
        handler: Callable[..., Any] | None,
        *,
        handlers: Mapping[str | bytes, Callable[..., Any]] | None,
        route_by: str | None,
        filter: HeadersFilter | None,
        retry: RetryTopics | None,
        dead_letter: DeadLetter | None,
        key_de: Callable[..., object] | None,
        value_de: Callable[..., object] | None,
        group: str | None,
    ) -> None:
        if (handlers is None) != (route_by is None):
            raise ConfigurationError("route_by= and handlers= go together")
        if handler is None and handlers is None:
            raise ConfigurationError("give a handler (or route_by= and handlers=)")
        self.handler = handler
        self.routes: dict[bytes, Callable[..., Any]] = {
            (k.encode() if isinstance(k, str) else k): h for k, h in (handlers or {}).items()
        }
        self.route_by = route_by
        self.filter = filter
        self.retry = retry
        if dead_letter is None and retry is not None:
            dead_letter = DeadLetter()
        self.dead_letter = dead_letter
        self.key_de = key_de
        self.value_de = value_de
        self.group = group
        self.main_of = route_map(topics, retry)
        self.retry_topics = frozenset(t for t, main in self.main_of.items() if t != main)
        longest = max(retry.delays, default=0) if retry else 0
        self.longest_wait_ms = round(max(10 * longest, MIN_LONGEST_WAIT) * 1000)
        """A retry record is never held longer than this from when it is read: a due time
        further off (a peer's mistake, or an attacker's) would stall its partition."""
        self.partitions: dict[str, int] = {}
        """Partition counts of the topics republished to (learned at start)."""
        no_rules = all(r is None for r in (filter, route_by, key_de, value_de))
        self.plain = no_rules and (retry is None or not retry.in_place)
        """True when a main-topic record needs nothing but one call of its handler."""

    def all_topics(self) -> list[str]:
        """Every topic read: the given ones and their retry topics."""
        return list(self.main_of)

    def targets(self, main: str) -> list[str]:
        """The retry and dead-letter topics records of ``main`` may go to."""
        out = self.retry.retry_topics(main) if self.retry is not None else []
        if self.dead_letter is not None:
            out.append(self.dead_letter.topic_for(main))
        return out

    # -- before handling ---------------------------------------------------------------------

    def attempt(self, msg: Message) -> int:
        """The delivery attempt this record is (1 on a main topic)."""
        if msg.topic() not in self.retry_topics:
            return 1
        return sh.decode_attempts(record_headers(msg).last_value(sh.ATTEMPTS))

    def due_ms(self, msg: Message, now: int) -> int | None:
        """The due time of a retry-topic record still in the future at ``now``, else None."""
        if msg.topic() not in self.retry_topics:
            return None
        due = sh.decode_timestamp(record_headers(msg).last_value(sh.BACKOFF_TIMESTAMP))
        if due is None or due <= now:
            return None
        return min(due, now + self.longest_wait_ms)  # a far-off due time stalls no partition

    def accepts(self, msg: Message) -> bool:
        """``filter``'s verdict on the record's headers (True without a filter)."""
        return self.filter is None or bool(self.filter(record_headers(msg)))

    def handler_for(self, msg: Message) -> Callable[..., Any] | None:
        """The handler for this record: by ``route_by``'s last value, else the default."""
        if self.route_by is None:
            return self.handler
        value = record_headers(msg).last_value(self.route_by)
        found = self.routes.get(value) if value is not None else None
        return found if found is not None else self.handler

    def deserialize(self, msg: Message) -> None:
        """Deserialize key and value in place (both or neither): the one rule the Consumer
        follows too. Raises DeserializationError (IntegrityError for a refused protected
        record) carrying the record untouched (its consumed bytes)."""
        if self.key_de is not None or self.value_de is not None:
            deserialize(msg, record_headers(msg), self.key_de, self.value_de)

    # -- after a failure ---------------------------------------------------------------------

    def hop(self, msg: Message, error: BaseException, attempt: int, now: int) -> Hop | None:
        """Where the failed record goes: the next retry topic, the dead-letter topic, or
        nowhere (None: no dead-letter topic configured)."""
        topic = msg.topic() or ""
        main = self.main_of.get(topic, topic)
        retry, dead_letter = self.retry, self.dead_letter
        next_attempt = attempt + 1
        if retry is not None and retry.retryable(error) and attempt < retry.max_attempts:
            target, kind = retry.retry_topic(main, next_attempt), RETRY
            due = now + round(retry.delay_before(next_attempt) * 1000)
        elif dead_letter is not None:
            target, kind, due = dead_letter.topic_for(main), DEAD_LETTER, now
        else:
            return None
        if kind == DEAD_LETTER and dead_letter is not None and dead_letter.contract == KHEADERS:
            headers = dead_letter_headers(msg, error, group_id=self.group).to_list()
        else:
            headers = spring_headers(
                consumed_headers(msg),
                topic=topic,
                partition=msg.partition() or 0,
                offset=msg.offset() or 0,
                timestamp=msg.timestamp(),
                group=self.group,
                error=error,
                next_attempt=next_attempt,
                due_ms=due,
            )
        partition = msg.partition() or 0
        if self.partitions.get(target, 0) <= partition:
            partition = -1
        return Hop(target, partition, headers, kind, next_attempt)


_NO_HEADERS = Headers().close()


def record_headers(msg: Message) -> Headers:
    """A consumed record's read-only Headers (empty ones when it has none)."""
    headers = msg.headers()
    return headers if isinstance(headers, Headers) else _NO_HEADERS


def consumed_headers(msg: Message) -> Pairs:
    """The record's headers as consumed: ``(key, bytes)`` pairs in order, duplicates kept."""
    return list(map(tuple, record_headers(msg)))
