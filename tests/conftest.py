"""Shared fixtures: a real Kafka-protocol broker for every test that crosses the wire."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from kheaders.broker import Broker, EmbeddedBroker, create_topic, find_or_start_broker

if TYPE_CHECKING:
    from tests.faults.proxy import FaultProxy

# Hypothesis' per-example deadline measures the machine's load, not our code: CI runs on two
# shared cores. Speed is the benchmarks' business (bench/), never a test's.
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("ci")


@pytest.fixture(scope="session")
def broker() -> Iterator[Broker]:
    """KHEADERS_BOOTSTRAP, else a Docker apache/kafka container, else embedded Tansu."""
    running = find_or_start_broker()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="session")
def bootstrap(broker: Broker) -> str:
    """The broker's bootstrap servers."""
    return broker.bootstrap


@pytest.fixture
def topic_factory(bootstrap: str, request: pytest.FixtureRequest) -> Callable[..., str]:
    """``topic_factory(partitions=1, config=None) -> name``: a fresh, created topic."""
    base = request.node.name.replace("[", "-").replace("]", "").replace("/", "-")[:60]

    def make(partitions: int = 1, config: dict[str, str] | None = None) -> str:
        name = f"{base}-{uuid.uuid4().hex[:8]}"
        return create_topic(bootstrap, name, partitions=partitions, config=config)

    return make


@pytest.fixture
def proxied() -> Iterator[tuple[EmbeddedBroker, FaultProxy]]:
    """A fresh embedded broker that clients reach through a fault proxy (tests/faults/proxy.py)."""
    from tests.faults.proxy import SEED, proxied_broker

    with proxied_broker(seed=SEED) as pair:
        yield pair


@pytest.fixture
def proxied_process() -> Iterator[tuple[EmbeddedBroker, FaultProxy]]:
    """As ``proxied``, the proxy running in a process of its own."""
    from tests.faults.proxy import SEED, proxied_broker

    with proxied_broker(seed=SEED, own_process=True) as pair:
        yield pair


@pytest.fixture
def topic(topic_factory: Callable[..., str]) -> str:
    """A fresh single-partition topic."""
    return topic_factory()
