"""Where a failed record goes next: retry topics by delay (the dead-letter topic after them is
:class:`kheaders.deadletter.DeadLetter`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kheaders._errors import ConfigurationError, DeserializationError, ProcessingError, kind_of
from kheaders.processing._validate import exception_types, flag, number

DEFAULT_MAX_DELAY = 900.0
"""Seconds: the longest delay RetryTopics takes unless ``max_delay`` is raised (a delay
written in milliseconds by mistake, 1000 for 1 s, is refused rather than waited 17 min)."""


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
    partition count. ``max_delay`` (seconds, default 900: a quarter of an hour) is the longest
    delay taken: a longer one is refused as likely milliseconds; raise it to wait longer.

    Raises ConfigurationError naming the argument: ``delays`` not a list of numbers (a
    string, a bool), a negative, non-finite or too long delay, ``in_place`` not an int >= 0,
    an empty suffix, ``not_retryable`` not exception types, ``create_topics`` not a bool.
    """

    delays: Sequence[float] = (1.0, 2.0)
    retry_suffix: str = "-retry"
    in_place: int = 0
    in_place_delay: float = 0.0
    not_retryable: tuple[type[BaseException], ...] = ()
    create_topics: bool = True
    max_delay: float = DEFAULT_MAX_DELAY
    _names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        number("RetryTopics: max_delay", self.max_delay)
        raw = self.delays
        if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
            raise ConfigurationError(
                f"RetryTopics: delays: expected a list of seconds like [1, 5], got {kind_of(raw)}"
            )
        for d in raw:
            number("RetryTopics: delays: each delay (seconds)", d, zero=True)
        number("RetryTopics: in_place_delay (seconds)", self.in_place_delay, zero=True)
        delays = tuple(float(d) for d in raw)
        for name, d in (*(("delays", d) for d in delays), ("in_place_delay", self.in_place_delay)):
            if d > self.max_delay:
                raise ConfigurationError(
                    f"RetryTopics: {name}: {d:g} s is longer than max_delay={self.max_delay:g} s"
                    f" ({d / 60:.1f} minutes): delays are seconds (did you mean"
                    f" {d / 1000:g} s?); raise max_delay= for longer waits"
                )
        number("RetryTopics: in_place", self.in_place, integer=True, zero=True)
        if not isinstance(self.retry_suffix, str) or not self.retry_suffix:
            raise ConfigurationError(
                f"RetryTopics: retry_suffix: expected a non-empty str, got"
                f" {kind_of(self.retry_suffix)}"
            )
        flag("RetryTopics: create_topics", self.create_topics)
        kinds = exception_types("RetryTopics: not_retryable", self.not_retryable)
        object.__setattr__(self, "delays", delays)
        object.__setattr__(self, "not_retryable", kinds)
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

    def check_in_place(
        self, config: Mapping[str, object], setting: str, default_ms: int, why: str = ""
    ) -> None:
        """Raise ConfigurationError when the in-place attempts could outlast ``setting`` of
        ``config`` (``default_ms`` when unset): ``why`` says what they run inside."""
        try:
            limit = float(str(config.get(setting, default_ms))) / 1000
        except ValueError:
            return  # librdkafka names the bad value itself
        if self.in_place and self.in_place * self.in_place_delay >= limit / 2:
            raise ConfigurationError(
                f"RetryTopics: in_place={self.in_place} x in_place_delay={self.in_place_delay} s"
                f" must stay well below {setting} ({limit:g} s){why}: use retry topics"
            )

    def retryable(self, error: BaseException) -> bool:
        """Whether ``error`` may be retried at all (not a deserialization failure, not a
        type named in ``not_retryable``)."""
        if isinstance(error, DeserializationError | ProcessingError):  # ProcessingError: no
            return False  # handler for the record's route: another try finds none either
        return not isinstance(error, self.not_retryable)


def route_map(topics: Iterable[str], retry: RetryTopics | None) -> dict[str, str]:
    """Every topic the processor reads mapped to its main topic (retry topics included)."""
    out: dict[str, str] = {}
    for topic in topics:
        out[topic] = topic
        if retry is not None:
            for name in retry.retry_topics(topic):
                out[name] = topic
    return out
