"""Every argument of every processor driver (and of RetryTopics and DeadLetter) is checked at
construction: a bad one raises ConfigurationError naming the argument and what was expected,
never an AttributeError in a worker or a refusal only in ``run()`` (issues 35.9, 33.4)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

from kheaders import ConfigurationError
from kheaders.deadletter import DeadLetter
from kheaders.processing import AIOProcessor, Processor, RetryTopics

CONFIG = {"bootstrap.servers": "localhost:1", "group.id": "arguments"}
"""Nothing here connects: construction alone is under test."""


def handle(_msg: Any) -> None:
    return None


async def handle_async(_msg: Any) -> None:
    return None


def build(driver: str, **changes: Any) -> Processor | AIOProcessor:
    kwargs: dict[str, Any] = {
        "config": dict(CONFIG),
        "topics": ["orders"],
        "handler": handle if driver == "sync" else handle_async,
    }
    kwargs.update(changes)
    if driver == "sync":
        return Processor(**kwargs)
    return AIOProcessor(**kwargs)


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("config", {"config": "bootstrap.servers=localhost:1"}, r"config: expected a dict"),
    (
        "config (misspelt key)",
        {"config": {**CONFIG, "auto.offset.rest": "earliest"}},
        r'config: No such configuration property: "auto\.offset\.rest"',
    ),
    (
        "config (bad value)",
        {"config": {**CONFIG, "session.timeout.ms": "six seconds"}},
        r'config: Invalid value for configuration property "session\.timeout\.ms"',
    ),
    ("config (no group)", {"config": {"bootstrap.servers": "localhost:1"}}, r"group\.id"),
    (
        "config (misspelt kheaders key)",
        {"config": {**CONFIG, "kheaders.tracing.mod": "span"}},
        r"unknown setting 'kheaders\.tracing\.mod'",
    ),
    ("topics", {"topics": "orders"}, r"topics: expected a non-empty list of topic names"),
    ("topics (empty)", {"topics": []}, r"topics: expected a non-empty list"),
    ("topics (not names)", {"topics": ["orders", 7]}, r"topics: each must be a topic name"),
    ("handler", {"handler": "handle"}, r"handler: expected a function"),
    ("handler (none at all)", {"handler": None}, r"give a handler"),
    ("retry", {"retry": [1, 3]}, r"retry: expected RetryTopics\(\.\.\.\).*delays=\[1, 3\]"),
    ("dead_letter", {"dead_letter": 7}, r"dead_letter: expected DeadLetter"),
    ("dead_letter (empty name)", {"dead_letter": ""}, r"dead_letter: expected DeadLetter"),
    ("dead_letter (False)", {"dead_letter": False}, r"dead_letter: expected DeadLetter"),
    ("filter", {"filter": "tenant=acme"}, r"filter: expected a function"),
    ("route_by", {"route_by": 3, "handlers": {"a": handle}}, r"route_by: expected a header"),
    ("handlers", {"route_by": "type", "handlers": [handle]}, r"handlers: expected a dict"),
    (
        "handlers (not callable)",
        {"route_by": "type", "handlers": {"created": "on_created"}},
        r"handlers\['created'\]: expected a function",
    ),
    ("handlers (no route_by)", {"handlers": {"a": handle}}, r"route_by= and handlers="),
    ("producer_config", {"producer_config": ["acks=all"]}, r"producer_config: expected a dict"),
    (
        "producer_config (misspelt key)",
        {"producer_config": {"lingr.ms": 5}},
        r'producer_config: No such configuration property: "lingr\.ms"',
    ),
    ("commit_interval", {"commit_interval": "1s"}, r"commit_interval: expected a number > 0"),
    ("commit_interval (0)", {"commit_interval": 0}, r"commit_interval: expected a number > 0"),
    ("poll_timeout", {"poll_timeout": -1}, r"poll_timeout: expected a number > 0"),
    ("poll_timeout (nan)", {"poll_timeout": float("nan")}, r"poll_timeout: expected a number"),
    ("batch_size", {"batch_size": 10.5}, r"batch_size: expected an int > 0"),
    ("batch_size (bool)", {"batch_size": True}, r"batch_size: expected an int > 0"),
    ("shutdown_timeout", {"shutdown_timeout": None}, r"shutdown_timeout: expected a number"),
    ("handle_signals", {"handle_signals": "no"}, r"handle_signals: expected True or False"),
    ("keep_timestamps", {"keep_timestamps": 1}, r"keep_timestamps: expected True or False"),
    ("tracer_provider", {"tracer_provider": "otel"}, r"tracer_provider: expected an Open"),
    ("meter_provider", {"meter_provider": object()}, r"meter_provider: expected an Open"),
    (
        "retry (in place outlasting max.poll.interval.ms)",
        {"retry": RetryTopics(delays=[], in_place=100, in_place_delay=10)},
        r"in_place=100 x in_place_delay=10",
    ),
]


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize(("argument", "changes", "expected"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_argument_is_refused_at_construction_naming_it(
    driver: str, argument: str, changes: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigurationError, match=expected):
        build(driver, **changes)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_misspelt_option_is_refused_naming_it_and_the_closest_one(driver: str) -> None:
    name = "Processor" if driver == "sync" else "AIOProcessor"
    expected = rf"retries: {name} takes no such option \(did you mean retry\?\)"
    with pytest.raises(ConfigurationError, match=expected):
        build(driver, retries=RetryTopics())
    with pytest.raises(ConfigurationError, match=rf"^redelivery: {name} takes no such option$"):
        build(driver, redelivery=None)  # a share group's option


@pytest.mark.parametrize("concurrency", [0, -2, 1.5, "8", True, None])
def test_a_bad_concurrency_is_refused(concurrency: object) -> None:
    with pytest.raises(ConfigurationError, match=r"concurrency: expected an int > 0"):
        build("async", concurrency=concurrency)


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_dead_letter_true_means_the_default_dead_letter_topic(driver: str) -> None:
    processor = build(driver, dead_letter=True)
    assert processor._core.dead_letter == DeadLetter()
    assert processor._core.targets("orders") == ["orders-dlt"]


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_dead_letter_as_a_name_means_that_topic_as_everywhere(driver: str) -> None:
    processor = build(driver, dead_letter="{topic}.dlq")
    assert processor._core.dead_letter == DeadLetter(topic="{topic}.dlq")
    assert processor._core.targets("orders") == ["orders.dlq"]


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_good_arguments_of_every_kind_are_taken(driver: str) -> None:
    """The checks refuse only what is wrong: keys kheaders and interceptors declare, a
    single exception type for not_retryable, a long delay with max_delay raised."""
    build(
        driver,
        config={
            **CONFIG,
            "auto.offset.reset": "earliest",
            "interceptor.classes": "kheaders.interceptors.correlation.CorrelationIdInterceptor",
            "kheaders.correlation.header": "x-corr",
        },
        retry=RetryTopics(delays=[3600], max_delay=7200, not_retryable=KeyError),  # type: ignore[arg-type]
        dead_letter=DeadLetter(topic="all-dead"),
        filter=lambda headers: True,
        route_by="type",
        handlers={"a": handle, b"b": handle},
        producer_config={"linger.ms": 20},
        commit_interval=0.5,
        poll_timeout=1,
        batch_size=10,
        shutdown_timeout=3,
        handle_signals=False,
        keep_timestamps=True,
    )


RETRY_BAD: list[tuple[str, Callable[[], object], str]] = [
    ("delays (str)", lambda: RetryTopics(delays="1,3"), r"delays: expected a list of seconds"),  # type: ignore[arg-type]
    ("delays (number)", lambda: RetryTopics(delays=5), r"delays: expected a list of seconds"),  # type: ignore[arg-type]
    ("delays (bool)", lambda: RetryTopics(delays=[True]), r"delays: each delay"),
    ("delays (text)", lambda: RetryTopics(delays=["1"]), r"delays: each delay"),  # type: ignore[list-item]
    ("delays (negative)", lambda: RetryTopics(delays=[-1]), r"delays: each delay"),
    ("delays (nan)", lambda: RetryTopics(delays=[float("nan")]), r"delays: each delay"),
    (
        "delays (milliseconds)",
        lambda: RetryTopics(delays=[1000, 3000]),
        r"delays: 1000 s is longer than max_delay=900 s .*did you mean 1 s",
    ),
    ("max_delay", lambda: RetryTopics(max_delay=0), r"max_delay: expected a number > 0"),
    ("retry_suffix", lambda: RetryTopics(retry_suffix=""), r"retry_suffix: expected a non-emp"),
    ("retry_suffix (bytes)", lambda: RetryTopics(retry_suffix=b"-r"), r"retry_suffix"),  # type: ignore[arg-type]
    ("in_place", lambda: RetryTopics(in_place=-1), r"in_place: expected an int >= 0"),
    ("in_place (float)", lambda: RetryTopics(in_place=2.5), r"in_place: expected an int"),  # type: ignore[arg-type]
    ("in_place_delay", lambda: RetryTopics(in_place_delay="0.2"), r"in_place_delay"),  # type: ignore[arg-type]
    (
        "in_place_delay (milliseconds)",
        lambda: RetryTopics(in_place_delay=5000),
        r"in_place_delay: 5000 s is longer than max_delay",
    ),
    ("not_retryable", lambda: RetryTopics(not_retryable=["KeyError"]), r"not_retryable"),  # type: ignore[arg-type]
    ("not_retryable (type)", lambda: RetryTopics(not_retryable=(int,)), r"not_retryable"),  # type: ignore[arg-type]
    ("create_topics", lambda: RetryTopics(create_topics="yes"), r"create_topics: expected True"),  # type: ignore[arg-type]
    ("suffix", lambda: DeadLetter(suffix=None), r"DeadLetter: suffix: expected a str"),  # type: ignore[arg-type]
    ("suffix (empty)", lambda: DeadLetter(suffix=""), r"DeadLetter: give a topic"),
    ("topic", lambda: DeadLetter(topic=""), r"DeadLetter: topic: expected a topic name"),
    ("topic (bytes)", lambda: DeadLetter(topic=b"dlt"), r"DeadLetter: topic"),  # type: ignore[arg-type]
    ("contract", lambda: DeadLetter(contract="avro"), r"DeadLetter: contract must be one of"),
]


@pytest.mark.parametrize(("argument", "make", "expected"), RETRY_BAD, ids=[b[0] for b in RETRY_BAD])
def test_a_bad_retry_or_dead_letter_setting_is_refused_naming_it(
    argument: str, make: Callable[[], object], expected: str
) -> None:
    with pytest.raises(ConfigurationError, match=expected) as raised:
        make()
    assert re.search(r"RetryTopics|DeadLetter", str(raised.value))


@pytest.mark.parametrize(
    "changes",
    [
        {"config": {**CONFIG, "sasl.pasword": "hunter2-secret"}},
        {"config": "sasl.password=hunter2-secret"},
        {"producer_config": "sasl.password=hunter2-secret"},
    ],
)
def test_a_refused_setting_never_shows_its_value(changes: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError) as raised:
        build("sync", **changes)
    assert "hunter2-secret" not in str(raised.value)


@pytest.mark.parametrize("driver", [Processor, AIOProcessor])
def test_every_argument_of_every_driver_has_a_refusal_above(driver: type) -> None:
    """A new argument cannot be added without a case in BAD (or its own test)."""
    names = set(inspect.signature(driver.__init__).parameters) | set(driver.OPTIONS)
    names -= {"self", "options"}
    tested = {case[0].split(" ")[0] for case in BAD} | {"concurrency"}
    assert names - tested == set()


def test_the_asyncio_driver_is_also_importable_from_kheaders_aio() -> None:
    import kheaders.aio
    import kheaders.processing

    assert kheaders.aio.AIOProcessor is kheaders.processing.AIOProcessor
    assert "AIOProcessor" in kheaders.aio.__all__
    assert repr(kheaders.aio.AIOProcessor) == "<class 'kheaders.processing.AIOProcessor'>"
