"""Mirror has every runner's lifecycle and config style: ``run()`` until ``stop()``, SIGTERM or
SIGINT; ``close()`` and ``with``; the source consumer's config first, ``group.id`` in it. Its
old keywords (``source=``, ``group_id=``, ``consumer_config=``, ``drain_timeout=``) still work
for a release, with a DeprecationWarning at the caller's line."""

from __future__ import annotations

import os
import signal
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from types import FrameType

import pytest
from confluent_kafka import Producer as RawProducer

from kheaders import ConfigurationError
from kheaders._errors import ProcessingError
from kheaders.mirror import Mirror
from tests.mirror.conftest import fast_group, read_all, wait_for

NEW = Mirror(
    {"bootstrap.servers": "a:9092", "group.id": "g", "session.timeout.ms": 45_000},
    "b:9092",
    ["orders"],
    shutdown_timeout=5.0,
)


def _same_settings(mirror: Mirror) -> None:
    assert mirror.consumer_config() == NEW.consumer_config()
    assert mirror.source == NEW.source == {"bootstrap.servers": "a:9092"}
    assert mirror.group_id == "g"
    assert mirror.shutdown_timeout == mirror.drain_timeout == 5.0


def test_the_old_keywords_warn_at_the_callers_line_and_mean_the_same() -> None:
    with pytest.warns(DeprecationWarning, match="is deprecated") as caught:
        old = Mirror(
            source="a:9092",
            target="b:9092",
            topics=["orders"],
            group_id="g",
            consumer_config={"session.timeout.ms": 45_000},
            drain_timeout=5.0,
        )
    assert [w.filename for w in caught] == [__file__] * 4
    assert sorted(str(w.message).split("(")[1].split("=")[0] for w in caught) == [
        "consumer_config",
        "drain_timeout",
        "group_id",
        "source",
    ]
    _same_settings(old)


def test_the_new_style_never_warns() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        _same_settings(
            Mirror(
                {"bootstrap.servers": "a:9092", "group.id": "g", "session.timeout.ms": 45_000},
                "b:9092",
                ["orders"],
                shutdown_timeout=5.0,
            )
        )


def test_consumer_settings_stay_out_of_the_clusters_shared_settings() -> None:
    """The dead-letter producer and the admin checks take the connection settings only."""
    mirror = Mirror(
        {
            "bootstrap.servers": "a:9092",
            "sasl.username": "u",
            "group.id": "g",
            "fetch.min.bytes": 9,
        },
        "b:9092",
        "^orders.*",
    )
    assert mirror.source == {"bootstrap.servers": "a:9092", "sasl.username": "u"}
    assert mirror.consumer_config()["fetch.min.bytes"] == 9
    assert mirror.consumer_config()["sasl.username"] == "u"
    assert Mirror("a:9092", "b:9092", ["orders"]).group_id == "kheaders-mirror"


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"config": "a:9092", "source": "a:9092"}, "config: give the source cluster once"),
        ({"config": {"bootstrap.servers": "a", "group.id": "g"}, "group_id": "h"}, "group.id"),
        ({"config": "a:9092", "shutdown_timeout": 1.0, "drain_timeout": 2.0}, "shutdown_timeout"),
        ({"target": "b:9092"}, "config: the source cluster"),
        ({"config": "a:9092", "target": None}, "target: the target cluster"),
    ],
)
def test_an_option_given_twice_or_missing_is_named(kwargs: dict[str, object], named: str) -> None:
    kwargs = {"target": "b:9092", "topics": ["orders"], **kwargs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the old names: tested above
        with pytest.raises(ConfigurationError, match=named):
            Mirror(**kwargs)  # type: ignore[arg-type]


@pytest.fixture
def guard() -> Iterator[list[int]]:
    """A SIGTERM handler of the test's own (a signal the mirror did not take never ends the
    test run); what it received is listed."""
    seen: list[int] = []

    def handler(signum: int, _frame: FrameType | None) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGTERM, previous)


def _produce(bootstrap: str, topic: str, n: int) -> None:
    producer = RawProducer({"bootstrap.servers": bootstrap})
    for i in range(n):
        producer.produce(topic, b"%d" % i, headers=[("i", b"%d" % i)])
    assert producer.flush(30) == 0


@pytest.mark.integration
def test_sigterm_drains_commits_and_returns_a_run_on_the_main_thread(
    bootstrap: str, cluster_b: str, both_topics: Callable[..., str], guard: list[int]
) -> None:
    topic = both_topics()
    _produce(bootstrap, topic, 3)
    group = f"life-{uuid.uuid4().hex[:8]}"
    mirror = Mirror(
        {"bootstrap.servers": bootstrap, "group.id": group, **fast_group()}, cluster_b, [topic]
    )

    def signal_after_the_copies() -> None:
        wait_for(lambda: mirror.stats.total("sent") == 3, what="the copies")
        os.kill(os.getpid(), signal.SIGTERM)

    helper = threading.Thread(target=signal_after_the_copies, daemon=True)
    helper.start()
    mirror.run()  # on the main thread: SIGTERM stops it
    helper.join(30)
    assert guard == []  # the mirror took the signal
    assert mirror.committed() == {(topic, 0): 3}
    assert [m.value() for m in read_all(cluster_b, topic, 3)] == [b"0", b"1", b"2"]


@pytest.mark.integration
def test_a_with_block_closes_a_mirror_running_in_a_thread(
    bootstrap: str, cluster_b: str, both_topics: Callable[..., str]
) -> None:
    topic = both_topics()
    _produce(bootstrap, topic, 2)
    group = f"life-{uuid.uuid4().hex[:8]}"
    config = {"bootstrap.servers": bootstrap, "group.id": group, **fast_group()}
    with Mirror(config, cluster_b, [topic], handle_signals=False) as mirror:
        worker = threading.Thread(target=mirror.run, daemon=True)
        worker.start()
        wait_for(lambda: mirror.stats.total("sent") == 2, what="the copies")
    assert not worker.is_alive()  # close() waited for run() to drain, commit and return
    assert mirror.committed() == {(topic, 0): 2}
    with pytest.raises(ProcessingError, match="Mirror is closed"):
        mirror.run()
