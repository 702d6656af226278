"""Where dead letters go, which headers say why, and the ``dead_letter=`` option every user
of a dead-letter topic takes (the processors, the mirror, the publisher, the command line)."""

from __future__ import annotations

from dataclasses import dataclass

from kheaders._errors import ConfigurationError, kind_of

SPRING = "spring"
KHEADERS = "kheaders"
_CONTRACTS = (SPRING, KHEADERS)
DEFAULT_SUFFIX = "-dlt"
"""Spring Kafka's default, the one other tools know: ``orders`` -> ``orders-dlt``."""
SOURCE_TOPIC = "{topic}"
"""In a dead-letter topic name: the source topic (``{topic}.dlq`` -> ``orders.dlq``)."""


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """Where records go once retries are exhausted or not allowed, and which headers say why.

    The topic is ``topic`` when given (``{topic}`` in it stands for the source topic), else
    ``<source topic><suffix>`` (Spring's default ``-dlt``). ``contract`` is ``"spring"``
    (Spring Kafka's ``kafka_original-*`` / ``kafka_exception-*`` and ``retry_topic-*``
    headers), ``"kheaders"`` (the ``kheaders.dlt.*`` headers) or None for the user's own:
    Spring's for the processors, kheaders' for the publisher and the mirror.

    Raises ConfigurationError for an unknown contract, a suffix that is not a str (or empty
    without a topic), or a ``topic`` that is not a non-empty str.
    """

    suffix: str = DEFAULT_SUFFIX
    topic: str | None = None
    contract: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.suffix, str):
            raise ConfigurationError(
                f"DeadLetter: suffix: expected a str, got {kind_of(self.suffix)}"
            )
        if self.topic is not None and (not isinstance(self.topic, str) or not self.topic):
            raise ConfigurationError(
                f"DeadLetter: topic: expected a topic name or None, got {kind_of(self.topic)}"
            )
        if self.contract is not None and self.contract not in _CONTRACTS:
            raise ConfigurationError(
                f"DeadLetter: contract must be one of {_CONTRACTS}, got {self.contract!r}"
            )
        if self.topic is None and not self.suffix:
            raise ConfigurationError("DeadLetter: give a topic or a non-empty suffix")

    def topic_for(self, topic: str) -> str:
        """The dead-letter topic for records of ``topic``."""
        if self.topic is None:
            return topic + self.suffix
        return self.topic.replace(SOURCE_TOPIC, topic)


def dead_letter_option(value: object) -> DeadLetter | None:
    """``dead_letter=`` checked: a DeadLetter as given; True for ``DeadLetter()``; a str for
    ``DeadLetter(topic=...)``; None as None.

    Raises ConfigurationError naming ``dead_letter`` for anything else.
    """
    if value is None:
        return None
    if isinstance(value, DeadLetter):
        return value
    if value is True:
        return DeadLetter()
    if isinstance(value, str) and value:
        return DeadLetter(topic=value)
    hint = ": leave it out (None) for no dead-letter topic" if value is False else ""
    raise ConfigurationError(
        "dead_letter: expected DeadLetter(...), a topic name, True (for DeadLetter()) or None,"
        f" got {kind_of(value)}{hint}"
    )


def kheaders_dead_letter(value: object, who: str) -> DeadLetter:
    """``dead_letter=`` of ``who``, a user that writes the ``kheaders.dlt.*`` headers and
    always has a dead-letter topic (None: ``<topic>-dlt``). Raises ConfigurationError
    naming ``dead_letter`` for a bad value or Spring's contract (the processor's)."""
    found = dead_letter_option(value) or DeadLetter()
    if found.contract == SPRING:
        raise ConfigurationError(
            f"dead_letter: {who} writes the kheaders.dlt.* headers: give a topic name or"
            ' DeadLetter(..., contract="kheaders")'
        )
    return found
