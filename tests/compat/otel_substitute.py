"""pytest plugin: confluent_kafka.Producer/Consumer are kheaders' clients for a whole run.

Copied as ``conftest.py`` next to opentelemetry-instrumentation-confluent-kafka's own tests
(from its sdist) by ``test_otel_sdist.py``, so those tests (their mock subclasses, the
instrumentor's ``ProxiedProducer``/``AutoInstrumentedProducer`` subclasses, ``Consumer(**conf)``)
run against kheaders' classes. It is loaded before any test module, so the instrumentation
module, imported by the tests, subclasses kheaders' classes.

kheaders builds its own confluent client from ``confluent_kafka.Producer``/``Consumer``;
while one of these substitutes is being built, those names are the original classes again
(else kheaders would build itself, forever).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import confluent_kafka
import pytest

import kheaders

assert "opentelemetry.instrumentation.confluent_kafka" not in sys.modules, "imported too early"

RAW_PRODUCER = confluent_kafka.Producer
RAW_CONSUMER = confluent_kafka.Consumer


@contextmanager
def _raw_classes() -> Iterator[None]:
    saved = confluent_kafka.Producer, confluent_kafka.Consumer
    confluent_kafka.Producer, confluent_kafka.Consumer = RAW_PRODUCER, RAW_CONSUMER
    try:
        yield
    finally:
        confluent_kafka.Producer, confluent_kafka.Consumer = saved


class Producer(kheaders.Producer):
    """kheaders.Producer, built while ``confluent_kafka.Producer`` is the original class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        with _raw_classes():
            super().__init__(*args, **kwargs)


class Consumer(kheaders.Consumer):
    """kheaders.Consumer, built while ``confluent_kafka.Consumer`` is the original class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        with _raw_classes():
            super().__init__(*args, **kwargs)


confluent_kafka.Producer = Producer  # type: ignore[misc]
confluent_kafka.Consumer = Consumer  # type: ignore[misc]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(
        f"confluent_kafka.Producer/Consumer substituted by kheaders: {Producer.__mro__[1]},"
        f" {Consumer.__mro__[1]}"
    )


@pytest.fixture(autouse=True)
def _still_substituted() -> None:
    """Every test starts with kheaders' classes in place (the instrumentor swaps them back)."""
    assert issubclass(confluent_kafka.Producer, kheaders.Producer)
    assert issubclass(confluent_kafka.Consumer, kheaders.Consumer)
