"""Where a failed record goes next: retry topics by delay, then the dead-letter topic."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kheaders._errors import ConfigurationError, DeserializationError, ProcessingError

SPRING = "spring"
KHEADERS = "kheaders"
_CONTRACTS = (SPRING, KHEADERS)


@dataclass(frozen=True, slots=True)
class RetryTopics:
    """Non-blocking retries: a failed record goes to a retry topic and is handled again once
    its delay has passed, while its source topic goes on.

    ``delays`` (seconds) are the waits before attempts 2, 3, ...: a record is handled at
    most ``1 + len(delays)`` times from topics, then dead-lettered. Topic names follow
    Spring Kafka's defaults: ``<topic><retry_suffix>`` when every delay is equal,
    ``<topic><retry_suffix>-<delay in ms>`` per distinct delay otherwise.
    ``in_place`` quick attempts (``in_place_delay`` seconds apart, on the polling thread)
    come before the first retry topic, for transient errors; with no ``delays`` they are
    the only retries and a key's records keep their order. ``not_retryable`` exception types
    (and always :class:`DeserializationError`, and a record no route or default handler
    takes) go straight to the dead-letter topic.
    ``create_topics`` creates missing retry and dead-letter topics with the source topic's
    partition count.

    Raises ConfigurationError for a negative or non-finite delay, a negative ``in_place``,
    or an empty suffix.
    """

    delays: Sequence[float] = (1.0, 2.0)
    retry_suffix: str = "-retry"
    in_place: int = 0
    in_place_delay: float = 0.0
    not_retryable: tuple[type[BaseException], ...] = ()
    create_topics: bool = True
    _names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        delays = tuple(float(d) for d in self.delays)
        for d in (*delays, self.in_place_delay):
            if not math.isfinite(d) or d < 0:
                raise ConfigurationError(f"RetryTopics: delays must be >= 0 seconds, got {d!r}")
        if self.in_place < 0:
            raise ConfigurationError(f"RetryTopics: in_place must be >= 0, got {self.in_place}")
        if not self.retry_suffix:
            raise ConfigurationError("RetryTopics: retry_suffix must not be empty")
        object.__setattr__(self, "delays", delays)
        object.__setattr__(self, "not_retryable", tuple(self.not_retryable))
        single = len(set(delays)) == 1
        names = tuple(
            self.retry_suffix if single else f"{self.retry_suffix}-{round(d * 1000)}"
            for d in delays
        )
        object.__setattr__(self, "_names", names)

    @property
    def max_attempts(self) -> int:
        """Deliveries from topics before the dead-letter topic: ``1 + len(delays)``."""
        return 1 + len(self.delays)

    def retry_topic(self, topic: str, next_attempt: int) -> str:
        """The retry topic of ``topic`` that holds delivery attempt ``next_attempt`` (>= 2)."""
        return topic + self._names[next_attempt - 2]

    def delay_before(self, next_attempt: int) -> float:
        """Seconds to wait before delivery attempt ``next_attempt`` (>= 2)."""
        return float(self.delays[next_attempt - 2])

    def retry_topics(self, topic: str) -> list[str]:
        """Every retry topic of ``topic``, in attempt order, each once."""
        return list(dict.fromkeys(topic + name for name in self._names))

    def retryable(self, error: BaseException) -> bool:
        """Whether ``error`` may be retried at all (not a deserialization failure, not a
        type named in ``not_retryable``)."""
        if isinstance(error, DeserializationError | ProcessingError):  # ProcessingError: no
            return False  # handler for the record's route: another try finds none either
        return not isinstance(error, self.not_retryable)


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """Where records go once retries are exhausted or not allowed, and which headers say why.

    The topic is ``topic`` when given, else ``<source topic><suffix>`` (Spring's default
    ``-dlt``). ``contract`` is ``"spring"`` (Spring Kafka's ``kafka_original-*`` /
    ``kafka_exception-*`` and ``retry_topic-*`` headers) or ``"kheaders"`` (the
    ``kheaders.dlt.*`` headers of :class:`kheaders.DeadLetterPublisher`).

    Raises ConfigurationError for an unknown contract or an empty suffix without a topic.
    """

    suffix: str = "-dlt"
    topic: str | None = None
    contract: str = SPRING

    def __post_init__(self) -> None:
        if self.contract not in _CONTRACTS:
            raise ConfigurationError(
                f"DeadLetter: contract must be one of {_CONTRACTS}, got {self.contract!r}"
            )
        if self.topic is None and not self.suffix:
            raise ConfigurationError("DeadLetter: give a topic or a non-empty suffix")

    def topic_for(self, topic: str) -> str:
        """The dead-letter topic for records of ``topic``."""
        return self.topic if self.topic is not None else topic + self.suffix


def route_map(topics: Iterable[str], retry: RetryTopics | None) -> dict[str, str]:
    """Every topic the processor reads mapped to its main topic (retry topics included)."""
    out: dict[str, str] = {}
    for topic in topics:
        out[topic] = topic
        if retry is not None:
            for name in retry.retry_topics(topic):
                out[name] = topic
    return out
