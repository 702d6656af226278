"""Shared fixtures: a real Kafka-protocol broker for every test that crosses the wire.

The reference broker is Apache Kafka itself (``kheaders.broker.ApacheKafka``, KRaft, from
Maven's jars), started once per run; ``KHEADERS_BOOTSTRAP`` or a Docker engine take its place
when present. Without Java and Maven the run falls back to the embedded Tansu broker and says
so in its header, unless ``KHEADERS_REQUIRE_JVM=1`` (set by ``.ci/run``) makes that an error.
The Tansu smoke tier (``tansu_bootstrap``) always runs on Tansu: it is what ``kheaders demo``
and ``kheaders broker`` give users.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from kheaders.broker import (
    Broker,
    EmbeddedBroker,
    create_topic,
    find_or_start_broker,
    java_and_maven_missing,
)
from tests.support.brokers import LocalBroker, reference_local, topic_base

if TYPE_CHECKING:
    from tests.faults.proxy import FaultProxy

# Hypothesis' per-example deadline measures the machine's load, not our code: CI runs on two
# shared cores. Speed is the benchmarks' business (bench/), never a test's.
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("ci")


def pytest_report_header(config: pytest.Config) -> str:
    local = reference_local()
    if local == "apache":
        return "reference broker: Apache Kafka (KHEADERS_BOOTSTRAP or Docker take precedence)"
    return f"reference broker: embedded Tansu ({java_and_maven_missing()})"


@pytest.fixture(scope="session")
def broker() -> Iterator[Broker]:
    """KHEADERS_BOOTSTRAP, else a Docker apache/kafka container, else Apache Kafka from
    Maven's jars (Tansu where Java or Maven is missing)."""
    running = find_or_start_broker(local=reference_local())
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="session")
def tansu_bootstrap() -> Iterator[str]:
    """The embedded Tansu broker, for the smoke tier (what ``kheaders demo`` users get)."""
    embedded = EmbeddedBroker().start()
    try:
        yield embedded.bootstrap
    finally:
        embedded.stop()


@pytest.fixture(scope="session")
def bootstrap(broker: Broker) -> str:
    """The broker's bootstrap servers."""
    return broker.bootstrap


@pytest.fixture
def topic_factory(bootstrap: str, request: pytest.FixtureRequest) -> Callable[..., str]:
    """``topic_factory(partitions=1, config=None) -> name``: a fresh, created topic."""
    base = topic_base(request.node.name)

    def make(partitions: int = 1, config: dict[str, str] | None = None) -> str:
        name = f"{base}-{uuid.uuid4().hex[:8]}"
        return create_topic(bootstrap, name, partitions=partitions, config=config)

    return make


@pytest.fixture(scope="session")
def proxied_upstream() -> Iterator[LocalBroker]:
    """A broker of the reference kind that advertises a port where each ``proxied`` test puts
    its own fault proxy: started once, shared by the fault tests (topics are per test)."""
    from tests.faults.proxy import proxied_local_broker

    broker = proxied_local_broker()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def proxied(proxied_upstream: LocalBroker) -> Iterator[tuple[LocalBroker, FaultProxy]]:
    """The shared broker that clients reach through a fresh fault proxy (tests/faults/proxy.py)."""
    from tests.faults.proxy import SEED, fault_proxy

    with fault_proxy(proxied_upstream, seed=SEED) as proxy:
        yield proxied_upstream, proxy


@pytest.fixture
def proxied_process(proxied_upstream: LocalBroker) -> Iterator[tuple[LocalBroker, FaultProxy]]:
    """As ``proxied``, the proxy running in a process of its own."""
    from tests.faults.proxy import SEED, fault_proxy

    with fault_proxy(proxied_upstream, seed=SEED, own_process=True) as proxy:
        yield proxied_upstream, proxy


@pytest.fixture
def topic(topic_factory: Callable[..., str]) -> str:
    """A fresh single-partition topic."""
    return topic_factory()
