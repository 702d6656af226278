"""How a share-group processor retries: the record is released back to its group and the
broker delivers it again, counting deliveries; a delay is a hold under the record's lock."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kheaders._errors import ConfigurationError
from kheaders.processing._retry import RetryTopics
from kheaders.processing._validate import exception_types, number

LOCK_DURATION = "share.record.lock.duration.ms"
DELIVERY_LIMIT = "share.delivery.count.limit"
KAFKA_LOCK_MS = 30_000
KAFKA_DELIVERY_LIMIT = 5
"""Kafka's defaults for the two group settings, used when the group's cannot be read."""
LOCK_SHARE = 0.5
"""A delay may take at most this share of the record's lock: the rest is for the handler
that ran before it and for the release to reach the broker before the lock expires."""


@dataclass(frozen=True, slots=True)
class Redelivery:
    """Retries by the share group itself: a failed record is released and delivered again
    (to any member), its broker-kept delivery count being the attempt.

    ``attempts`` is how many deliveries a record gets before it is dead-lettered; ``None``
    takes the group's ``share.delivery.count.limit`` (Kafka's default 5), read at start. It
    can be no more than that limit: the broker archives a record past it, so a later
    attempt would never come and no dead letter would be written. ``delay`` (seconds) is
    how long a failed record is held before it is released; it must stay within half of the
    group's ``share.record.lock.duration.ms`` (confluent-kafka 2.16 cannot renew a lock).
    ``not_retryable`` exception types (and always a
    :class:`~kheaders.DeserializationError`) are dead-lettered at once.

    Raises ConfigurationError naming the argument: ``attempts`` not an int >= 1, ``delay``
    negative or not finite, ``not_retryable`` not exception types.
    """

    attempts: int | None = None
    delay: float = 0.0
    not_retryable: tuple[type[BaseException], ...] = ()

    def __post_init__(self) -> None:
        if self.attempts is not None:
            number("Redelivery: attempts", self.attempts, integer=True)
        number("Redelivery: delay (seconds)", self.delay, zero=True)
        kinds = exception_types("Redelivery: not_retryable", self.not_retryable)
        object.__setattr__(self, "not_retryable", kinds)

    def last_attempt(self, group: Mapping[str, str]) -> int:
        """The delivery that is the last try, for a group with settings ``group``.

        Raises ConfigurationError when ``attempts`` is above the group's delivery limit, or
        ``delay`` too long for its record lock.
        """
        limit = _int(group.get(DELIVERY_LIMIT), KAFKA_DELIVERY_LIMIT)
        lock_ms = _int(group.get(LOCK_DURATION), KAFKA_LOCK_MS)
        if self.attempts is not None and self.attempts > limit:
            raise ConfigurationError(
                f"Redelivery: attempts={self.attempts} is above the group's {DELIVERY_LIMIT}"
                f" ({limit}): the broker archives a record after {limit} deliveries, so later"
                " attempts and the dead letter would never happen; lower attempts or raise"
                " the group's limit"
            )
        if self.delay * 1000 > lock_ms * LOCK_SHARE:
            raise ConfigurationError(
                f"Redelivery: delay={self.delay:g} s is more than half the group's"
                f" {LOCK_DURATION} ({lock_ms} ms): a held record's lock would expire first;"
                " use a shorter delay, a longer lock, or a Processor with RetryTopics"
            )
        return limit if self.attempts is None else self.attempts

    def as_retry(self, last_attempt: int) -> RetryTopics:
        """The engine's retry policy for a record tried ``last_attempt`` times: a release
        (after ``delay``) where a consumer group's processor would publish to a retry topic."""
        return RetryTopics(
            delays=[self.delay] * (last_attempt - 1),
            not_retryable=self.not_retryable,
            create_topics=False,
        )


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default
