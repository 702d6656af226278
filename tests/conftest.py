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
from pathlib import Path
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
from tests.support import cores
from tests.support.brokers import LocalBroker, reference_local, topic_base

if TYPE_CHECKING:
    from tests.faults.proxy import FaultProxy

TESTS = Path(__file__).resolve().parent

# Hypothesis' per-example deadline measures the machine's load, not our code: CI runs on two
# shared cores. Speed is the benchmarks' business (bench/), never a test's.
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("ci")


# -- both cores: the model, codec, client and fuzz tests run on each (tests/support/cores.py) --

BOTH_CORES = ("model", "codec", "clients", "fuzz")
"""The test folders whose every test takes the ``core`` fixture."""


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> object:
    module = yield
    if (
        isinstance(module, pytest.Module)
        and module_path.parent.name in BOTH_CORES
        and module_path.parent.parent == TESTS
    ):
        module.add_marker(pytest.mark.usefixtures("core"))
    return module


@pytest.fixture(params=cores.CORES)
def core(request: pytest.FixtureRequest) -> Iterator[cores.Core]:
    """The test runs on this core (``pure``: the Python; ``compiled``: the Cython build,
    skipped only where it was not built); its modules are the ones the test sees."""
    chosen = cores.get(request.param)
    if chosen is None:
        pytest.skip("no compiled core here (not built, or KHEADERS_NO_EXTENSIONS set)")
    with cores.active(chosen, request.module) as twins:
        request.node.stash[_TWINS] = twins
        yield chosen


_TWINS = pytest.StashKey[dict[int, tuple[object, object]]]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "any_core: the test learns nothing from the core (it audits the environment, builds a"
        " wheel): in a folder run on both cores, it runs on one",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    once = [
        item
        for item in items
        if item.get_closest_marker("any_core") is not None
        and getattr(item, "callspec", None) is not None
        and item.callspec.params.get("core", cores.IMPORTED) != cores.IMPORTED  # type: ignore[attr-defined]
    ]
    if once:
        config.hook.pytest_deselected(items=once)
        dropped = set(map(id, once))
        items[:] = [item for item in items if id(item) not in dropped]


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> object:
    twins = pyfuncitem.stash.get(_TWINS, None)
    if twins:  # parametrize values built at collection, from the set import gives
        args = pyfuncitem.funcargs
        for name, value in list(args.items()):
            args[name] = cores.twin_of(value, twins)
    return (yield)


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
