"""kheaders' log: a quiet default, its level and outputs, and librdkafka's lines routed through
it (repeats counted, a broker's outage told once each way, secrets never written)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import confluent_kafka
import pytest
import structlog
from confluent_kafka import TopicPartition
from structlog.testing import capture_logs

import kheaders
from kheaders import ConfigurationError, configure_logging
from kheaders._client import clientlog
from kheaders._client.admin import admin_client
from kheaders._client.clientlog import LibrdkafkaLog, client_log, route_client_log
from kheaders._client.consumer import consumer_log
from kheaders._client.producer import producer_log
from kheaders._log import get_logger
from kheaders._logsetup import JSON_ENV, LEVEL_ENV
from kheaders.aio import AIOConsumer, AIOProducer
from kheaders.broker import EmbeddedBroker, create_topic
from tests.faults.proxy import FaultProxy

CLOSED = "127.0.0.1:1"
"""A port nothing listens on: every connection is refused at once."""
CONNECT_FAIL = (
    "{b}/bootstrap: Connect to ipv4#{b} failed: Connection refused (after 0ms in state CONNECT)"
)


@pytest.fixture(autouse=True)
def pristine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No kheaders setting, no level in the environment, structlog as the application
    left it before configuring anything."""
    monkeypatch.delenv(LEVEL_ENV, raising=False)
    monkeypatch.delenv(JSON_ENV, raising=False)
    structlog.reset_defaults()
    configure_logging()
    yield
    configure_logging()
    structlog.reset_defaults()


def events(buf: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]


# -- the level and the outputs ---------------------------------------------------------------


def test_kheaders_is_quiet_by_default_and_warns_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = get_logger("kheaders.test")
    log.debug("debug.event", n=1)
    log.info("info.event", n=2)
    log.warning("warning.event", n=3)
    out, err = capsys.readouterr()
    assert out == ""  # structlog's own default would print all three on stdout
    assert "warning.event" in err
    assert "kheaders.test" in err
    assert "debug.event" not in err
    assert "info.event" not in err
    assert not structlog.is_configured()  # kheaders configured nothing of structlog's


def test_the_level_comes_from_the_environment_unless_configured(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = get_logger("kheaders.test")
    monkeypatch.setenv(LEVEL_ENV, "DEBUG")
    log.debug("from.env")
    configure_logging(level="error")
    log.warning("below.configured")
    log.error("at.configured")
    err = capsys.readouterr().err
    assert "from.env" in err
    assert "below.configured" not in err
    assert "at.configured" in err


@pytest.mark.parametrize("level", ["verbose", -1, True, 2.5])
def test_an_unknown_level_is_refused_naming_the_argument(level: object) -> None:
    with pytest.raises(ConfigurationError, match=r"configure_logging\(level=\.\.\.\): expected"):
        configure_logging(level=level)  # type: ignore[arg-type]


def test_an_unknown_level_in_the_environment_is_ignored_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(LEVEL_ENV, "loud-please")
    monkeypatch.setattr("kheaders._logsetup._env_cache", {})  # said once per process
    with pytest.warns(RuntimeWarning, match=LEVEL_ENV):
        get_logger("kheaders.test").warning("still.logged")
    assert "still.logged" in capsys.readouterr().err


def test_json_output_is_one_object_per_line_with_level_logger_and_fields() -> None:
    buf = io.StringIO()
    configure_logging(level="info", json=True, stream=buf)
    get_logger("kheaders.test").info("json.event", topic="orders", offset=7)
    (event,) = events(buf)
    assert event["event"] == "json.event"
    assert event["level"] == "info"
    assert event["logger"] == "kheaders.test"
    assert (event["topic"], event["offset"]) == ("orders", 7)
    assert "timestamp" in event
    assert not structlog.is_configured()


def test_json_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(JSON_ENV, "yes")
    get_logger("kheaders.test").error("env.json", n=1)
    (line,) = capsys.readouterr().err.splitlines()
    assert json.loads(line)["event"] == "env.json"


def test_stdlib_routing_uses_kheaders_logger_names_and_stdlib_levels(
    caplog: pytest.LogCaptureFixture,
) -> None:
    configure_logging(stdlib=True)
    log = get_logger("kheaders.test")
    with caplog.at_level(logging.INFO, logger="kheaders.test"):
        log.debug("std.debug")
        log.info("std.info", topic="orders")
    (record,) = caplog.records
    assert record.name == "kheaders.test"
    assert record.levelno == logging.INFO
    assert record.getMessage() == "std.info topic='orders'"
    assert record.kheaders == {"topic": "orders"}  # type: ignore[attr-defined]


def test_stream_with_stdlib_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="stream"):
        configure_logging(stdlib=True, stream=io.StringIO())


def test_a_structlog_the_application_configured_decides_unless_a_level_is_set() -> None:
    log = get_logger("kheaders.test")
    with capture_logs() as logs:  # configures structlog, as an application would
        log.info("app.decides")
        configure_logging(level="warning")
        log.info("kheaders.level.wins")
    assert [e["event"] for e in logs] == ["app.decides"]


# -- librdkafka's lines (the router alone, on a clock the test moves) -----------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def router_of(conf: dict[str, object]) -> LibrdkafkaLog:
    router = client_log(conf)
    assert router is not None
    return router


def feed(router: LibrdkafkaLog, level: int, facility: str, text: str) -> None:
    router.log(level, "%s [%s] %s", facility, "rdkafka#producer-1", text)


@pytest.fixture
def captured() -> io.StringIO:
    buf = io.StringIO()
    configure_logging(level="debug", json=True, stream=buf)
    return buf


def test_repeated_lines_become_one_event_and_a_count(captured: io.StringIO) -> None:
    clock = Clock()
    router = LibrdkafkaLog(clock=clock, window=30)
    for i in range(50):
        clock.now += 0.1
        feed(router, logging.WARNING, "REQTMOUT", f"Timed out after {i}ms waiting")
    assert [e["message"] for e in events(captured)] == ["Timed out after 0ms waiting"]
    clock.now += 30
    feed(router, logging.WARNING, "REQTMOUT", "Timed out after 3ms waiting")  # window passed
    router.flush()
    counted = [(e.get("repeats"), e["level"]) for e in events(captured)]
    assert counted == [(None, "warning"), (49, "warning"), (None, "warning")]
    assert sum(r or 1 for r, _ in counted) == router.lines == 51  # a summary counts its repeats


@pytest.mark.parametrize("broker_debug", [True, False])
def test_a_broker_outage_is_told_once_each_way(captured: io.StringIO, broker_debug: bool) -> None:
    """With librdkafka's broker debug context (a consumer's) or without it (a producer's,
    whose lines tell the failures but never the return)."""
    clock = Clock()
    router = LibrdkafkaLog(clock=clock, broker_debug=broker_debug)
    broker = "kafka-1.example:9092"
    for i in range(40):
        clock.now += 0.25
        if broker_debug:
            feed(router, logging.DEBUG, "FAIL", CONNECT_FAIL.format(b=broker) + " (_TRANSPORT)")
        # librdkafka's own line for the failure: an error, or info for a dropped handshake
        level, fail = (
            (logging.ERROR, CONNECT_FAIL.format(b=broker))
            if i % 2
            else (logging.INFO, f"{broker}/1: Disconnected (after 1ms in state APIVERSION_QUERY)")
        )
        feed(router, level, "FAIL", fail)
        feed(
            router,
            logging.DEBUG,
            "STATE",
            f"{broker}/bootstrap: Broker changed state CONNECT -> DOWN",
        )
    if broker_debug:
        up = f"{broker}/1: Broker changed state APIVERSION_QUERY -> UP"
        feed(router, logging.DEBUG, "STATE", up)
        feed(router, logging.DEBUG, "STATE", f"{broker}/1: Broker changed state UP -> UPDATE")
    router.flush()
    told = events(captured)
    outage = [e for e in told if e["event"].startswith("broker.")]
    assert [(e["event"], e["level"], e["broker"]) for e in outage] == [
        ("broker.unreachable", "warning", broker),
        *([("broker.reachable", "warning", broker)] if broker_debug else []),
    ]
    first = "Connect to ipv4#kafka-1" if broker_debug else "Disconnected (after 1ms in state"
    assert outage[0]["reason"].startswith(first)  # the first failure's own words
    if broker_debug:
        assert outage[1]["failures"] == 40
        assert outage[1]["seconds"] == pytest.approx(9.75)
    assert router._down[broker].failures == 40 if not broker_debug else not router._down
    lines = [e for e in told if e["event"] == "librdkafka.log"]
    assert {e["level"] for e in lines} == {"info"}  # the outage's lines: counted, not shouted
    assert sum(e.get("repeats", 1) for e in lines) == 40
    assert {e["facility"] for e in lines} == {"FAIL"}  # not the debug lines kheaders asked for


def test_an_idle_connection_the_broker_closed_is_no_outage(captured: io.StringIO) -> None:
    router = LibrdkafkaLog()
    closed = "b:9092/1: Disconnected (after 600000ms in state UP)"
    feed(router, logging.DEBUG, "FAIL", closed + " (_TRANSPORT)")
    feed(router, logging.INFO, "FAIL", closed)
    feed(
        router,
        logging.DEBUG,
        "FAIL",
        "b:9092/1: Decommissioning this broker (after 0ms in state INIT) (_DESTROY_BROKER)",
    )
    assert [e["event"] for e in events(captured)] == ["librdkafka.log"]


def test_debug_lines_are_logged_when_the_config_asked_for_debug(captured: io.StringIO) -> None:
    conf = route_client_log({"bootstrap.servers": CLOSED, "debug": "cgrp"}, watch_brokers=True)
    assert conf["debug"] == "cgrp,broker"
    router = router_of(conf)
    feed(router, logging.DEBUG, "JOIN", "Joining group g")
    assert [e["message"] for e in events(captured)] == ["Joining group g"]


def test_a_quieter_log_level_in_the_config_is_kept(captured: io.StringIO) -> None:
    router = router_of(route_client_log({"bootstrap.servers": CLOSED, "log_level": 3}))
    feed(router, logging.WARNING, "CONFWARN", "a warning librdkafka was told to keep quiet")
    feed(router, logging.ERROR, "ERROR", "an error")
    assert [e["message"] for e in events(captured)] == ["an error"]


SECRETS = {
    "sasl.password": "hunter2-Zq9",
    "ssl.key.password": "pem-pass-77",
    "ssl.key.pem": (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"
    ),
    "sasl.oauthbearer.client.secret": "oauth-secret-5",
}


def test_secret_settings_never_appear_in_a_line(captured: io.StringIO) -> None:
    router = router_of(route_client_log({"bootstrap.servers": CLOSED, **SECRETS}))
    for key, value in SECRETS.items():
        feed(router, logging.ERROR, "CONF", f"{key} = {value} (echoed)")
    feed(router, logging.ERROR, "CONF", "one line of the key: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC")
    text = captured.getvalue()
    for value in SECRETS.values():
        assert value not in text
        for part in value.splitlines():
            assert part not in text or part.startswith("-----")
    assert text.count("[redacted]") == 5


def test_a_logger_the_caller_passed_is_left_alone() -> None:
    mine = logging.getLogger("mine")
    conf = route_client_log({"bootstrap.servers": CLOSED, "logger": mine})
    assert conf == {"bootstrap.servers": CLOSED, "logger": mine}  # no debug context added


# -- real clients pointed at a closed port --------------------------------------------------


def until(predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(0.05)


class CountingFails:
    """Counts the connection-failure lines librdkafka hands to kheaders (the ones it would
    otherwise write to stderr), by wrapping :meth:`LibrdkafkaLog.log`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        original = LibrdkafkaLog.log

        def log(router: LibrdkafkaLog, level: int, fmt: str, *args: object) -> None:
            if args[:1] == ("FAIL",) and level >= logging.WARNING:
                self.n += 1
            original(router, level, fmt, *args)

        monkeypatch.setattr(LibrdkafkaLog, "log", log)


def _producer(poll: Callable[[Any], None]) -> Callable[[], Any]:
    def run() -> Any:
        producer = kheaders.Producer({"bootstrap.servers": CLOSED})
        producer.produce("t", b"v")
        poll(producer.poll)
        return producer.close(0.5)

    return run


def _consumer(poll: Callable[[Any], None]) -> Callable[[], Any]:
    def run() -> Any:
        consumer = kheaders.Consumer({"bootstrap.servers": CLOSED, "group.id": "g"})
        consumer.subscribe(["t"])
        poll(consumer.poll)
        consumer.close()

    return run


def _aio_producer(poll: Callable[[Any], None]) -> Callable[[], Any]:
    async def main() -> None:
        producer = AIOProducer({"bootstrap.servers": CLOSED})
        await producer.produce("t", b"v")
        await asyncio.to_thread(poll, time.sleep)  # its own thread polls
        await producer.close(timeout=0.5)

    return lambda: asyncio.run(main())


def _aio_consumer(poll: Callable[[Any], None]) -> Callable[[], Any]:
    async def main() -> None:
        consumer = AIOConsumer({"bootstrap.servers": CLOSED, "group.id": "g"})
        await consumer.subscribe(["t"])

        async def polling() -> None:
            while not done.is_set():
                await consumer.poll(0.1)

        done = asyncio.Event()
        task = asyncio.create_task(polling())
        await asyncio.to_thread(poll, time.sleep)
        done.set()
        await task
        await consumer.close()

    return lambda: asyncio.run(main())


@pytest.mark.parametrize("client", [_producer, _consumer, _aio_producer, _aio_consumer])
def test_a_client_at_a_closed_port_writes_nothing_to_stderr_and_logs_counted_events(
    client: Callable[[Callable[[Any], None]], Callable[[], Any]],
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    buf = io.StringIO()
    configure_logging(level="info", json=True, stream=buf)
    fails = CountingFails(monkeypatch)

    def poll(serve: Callable[[float], object]) -> None:
        def enough() -> bool:
            serve(0.1)
            return fails.n >= 10  # stderr had ~24 of them a second

        until(enough, "ten refused connections")

    client(poll)()
    err = capfd.readouterr().err
    assert "|FAIL|" not in err
    assert "Connection refused" not in err
    told = events(buf)
    unreachable = [e for e in told if e["event"] == "broker.unreachable"]
    assert [(e["broker"], e["level"]) for e in unreachable] == [(CLOSED, "warning")]
    lines = [e for e in told if e["event"] == "librdkafka.log" and e["facility"] == "FAIL"]
    assert len(lines) < fails.n  # repeats collapsed ...
    assert sum(e.get("repeats", 1) for e in lines) == fails.n  # ... and every one counted


def test_a_broker_that_goes_away_and_comes_back_is_told_once_each_way(
    proxied: tuple[EmbeddedBroker, FaultProxy], capfd: pytest.CaptureFixture[str]
) -> None:
    broker, proxy = proxied
    topic = create_topic(broker.bootstrap, f"outage-{uuid.uuid4().hex[:8]}")
    buf = io.StringIO()
    configure_logging(level="info", json=True, stream=buf)
    consumer = kheaders.Consumer(
        {"bootstrap.servers": proxy.address, "group.id": "outage", "auto.offset.reset": "earliest"}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])

    def told(event: str) -> Callable[[], bool]:
        def check() -> bool:
            consumer.poll(0.1)
            return any(e["event"] == event for e in events(buf))

        return check

    until(lambda: consumer.poll(0.1) is None and consumer.assignment() != [], "an assignment")
    proxy.refuse(True)  # the broker is gone: connections are closed at once
    proxy.cut()
    until(told("broker.unreachable"), "the outage to be told")
    proxy.refuse(False)
    until(told("broker.reachable"), "the broker's return to be told")
    consumer.close()
    outage = [e for e in events(buf) if e["event"].startswith("broker.")]
    assert [(e["event"], e["broker"]) for e in outage] == [
        ("broker.unreachable", proxy.address),
        ("broker.reachable", proxy.address),
    ]
    assert outage[1]["failures"] >= 1
    assert "|FAIL|" not in capfd.readouterr().err


def test_only_consumers_get_the_broker_debug_context_unless_the_config_asks() -> None:
    """A producer's lines would count in its poll() result and len() (tests/compat holds
    those equal to confluent-kafka's); a consumer serves them inside poll/consume."""
    producer = kheaders.Producer({"bootstrap.servers": CLOSED})
    consumer = kheaders.Consumer({"bootstrap.servers": CLOSED, "group.id": "g"})
    asked = kheaders.Producer({"bootstrap.servers": CLOSED, "debug": "broker"})
    try:
        flags = [client_log_of(c).broker_debug for c in (producer, consumer, asked)]
        assert flags == [False, True, True]
    finally:
        producer.close(0)
        consumer.close()
        asked.close(0)


def test_a_log_that_fails_never_breaks_the_client_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    class Failing:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError("the log is broken")

    monkeypatch.setattr(clientlog, "_log", Failing())
    producer = kheaders.Producer({"bootstrap.servers": CLOSED})
    producer.produce("t", b"v")
    deadline = time.monotonic() + 60
    router = client_log_of(producer)
    while time.monotonic() < deadline and (router.dropped < 2 or router.lines < 20):
        producer.poll(0.1)  # raises nothing although no line can be logged
    assert router.dropped >= 2  # the outage and the first refused connection
    assert producer.close(0.1) is False


def test_a_closed_stream_loses_the_line_and_raises_nothing() -> None:
    broken = io.StringIO()
    broken.close()
    configure_logging(json=True, stream=broken)
    get_logger("kheaders.test").error("lost")


def client_log_of(client: kheaders.Producer | kheaders.Consumer) -> LibrdkafkaLog:
    router = producer_log(client) if isinstance(client, kheaders.Producer) else consumer_log(client)
    assert isinstance(router, LibrdkafkaLog)
    return router


def test_a_logical_broker_tells_no_outage_of_its_own(captured: io.StringIO) -> None:
    router = LibrdkafkaLog(broker_debug=True)
    fail = "Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)"
    feed(router, logging.DEBUG, "FAIL", f"127.0.0.1:9092/1: {fail} (_TRANSPORT)")
    feed(router, logging.DEBUG, "FAIL", f"GroupCoordinator/1: {fail} (_TRANSPORT)")
    feed(router, logging.DEBUG, "FAIL", f"[::1]:9092/bootstrap: {fail} (_TRANSPORT)")
    told = [(e["event"], e["broker"]) for e in events(captured)]
    assert told == [("broker.unreachable", "127.0.0.1:9092"), ("broker.unreachable", "[::1]:9092")]


def test_an_admin_client_kheaders_builds_tells_the_outage_when_its_block_ends(
    capfd: pytest.CaptureFixture[str],
) -> None:
    buf = io.StringIO()
    configure_logging(json=True, stream=buf)
    with (
        pytest.raises(confluent_kafka.KafkaException),
        admin_client({"bootstrap.servers": CLOSED}) as admin,
    ):
        admin.list_topics(timeout=2)
    assert [(e["event"], e["broker"]) for e in events(buf)] == [("broker.unreachable", CLOSED)]
    assert "|FAIL|" not in capfd.readouterr().err


def test_log_level_zero_silences_the_broker_events_too(captured: io.StringIO) -> None:
    router = router_of(route_client_log({"bootstrap.servers": CLOSED, "log_level": 0}))
    feed(router, logging.ERROR, "FAIL", CONNECT_FAIL.format(b="b:9092"))
    router.flush()
    assert events(captured) == []
    assert router._down  # still noted: nothing is told


def test_a_real_client_at_debug_all_never_writes_its_password(
    capfd: pytest.CaptureFixture[str],
) -> None:
    secret = "Pa55-w0rd-never-logged"
    buf = io.StringIO()
    configure_logging(level="debug", json=True, stream=buf)
    producer = kheaders.Producer(
        {
            "bootstrap.servers": CLOSED,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "svc",
            "sasl.password": secret,
            "debug": "all",  # librdkafka's config dump ("conf") included
        }
    )
    router = client_log_of(producer)
    until(lambda: producer.poll(0.1) is not None and router.lines >= 200, "librdkafka's lines")
    producer.close(0.1)
    assert any(e.get("facility") == "CONF" for e in events(buf))  # the config was echoed
    assert secret not in buf.getvalue()
    assert secret not in capfd.readouterr().err


def test_a_logger_given_to_the_client_gets_librdkafkas_lines_itself() -> None:
    class Mine:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def log(self, level: int, fmt: str, *args: object) -> None:
            self.lines.append(fmt % args)

    buf = io.StringIO()
    configure_logging(level="debug", json=True, stream=buf)
    mine = Mine()
    producer = kheaders.Producer({"bootstrap.servers": CLOSED}, logger=mine)
    producer.produce("t", b"v")
    until(lambda: producer.poll(0.1) is not None and len(mine.lines) >= 3, "the caller's lines")
    producer.close(0.1)
    assert producer_log(producer) is None
    assert any("Connection refused" in line for line in mine.lines)
    assert not [e for e in events(buf) if e["logger"] == "kheaders.librdkafka"]


def test_the_share_consumer_preview_notice_is_logged_once_per_process(
    captured: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ShareConsumer's librdkafka says it at creation: the first client logs it, the
    others read it; any other warning is still logged by each client."""
    monkeypatch.setattr(clientlog, "_said_once", set())
    preview = 'The share consumer is in "Preview" and is not recommended for production use'
    routers = [LibrdkafkaLog(), LibrdkafkaLog()]
    for router in routers:
        feed(router, logging.WARNING, "SHARECONSUMER", f"[thrd:app]: {preview}")
        feed(router, logging.WARNING, "SHARECONSUMER", "Something else went wrong")
    said = [(e["facility"], e["message"]) for e in events(captured)]
    assert said == [
        ("SHARECONSUMER", preview),
        ("SHARECONSUMER", "Something else went wrong"),
        ("SHARECONSUMER", "Something else went wrong"),
    ]
    assert [r.lines for r in routers] == [2, 2]
