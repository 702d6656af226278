"""The header-key rule: a key librdkafka cannot take intact is refused before it sees the record.

librdkafka takes header keys as C strings: a lone surrogate crashed the interpreter (SIGSEGV)
and a NUL cut the key silently. Every produce path is tried in a child process, so a
regression shows as a failed test naming the path, not as a dead test run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer as RawConsumer
from confluent_kafka import TopicPartition

from kheaders import HeaderLimits, Headers, InvalidNameError, KHeadersError, Producer
from kheaders._model.keys import KEY_SIZES, check_keys, key_size

ROOT = Path(__file__).resolve().parents[2]

BAD_KEYS = {
    "lone surrogate": "k\udcff",
    "NUL": "a\x00b",
    "surrogate from fsdecode": b"\xff\xfe".decode("utf-8", "surrogateescape"),
}

# Each path is a statement producing one record with headers HEADERS (a list of pairs) to
# topic T with producer options; `p` is built from CONF.
PATHS = {
    "plain produce": "p = Producer(CONF); p.produce(T, b'v', headers=HEADERS)",
    "dict headers": "p = Producer(CONF); p.produce(T, b'v', headers=dict(HEADERS))",
    "limits off": "p = Producer(CONF, limits=False); p.produce(T, b'v', headers=HEADERS)",
    "with on_delivery": "p = Producer(CONF); p.produce(T, b'v', headers=HEADERS, on_delivery=CB)",
    "interceptors": "p = Producer(CONF, interceptors=[Noop()]); p.produce(T, b'v', headers=HEADERS)",  # noqa: E501
    "send()": "p = Producer(CONF); p.send(ProducerRecord(T, b'v', headers=Headers.from_confluent(HEADERS).copy()))",  # noqa: E501
    "Headers wrapped unchecked": "p = Producer(CONF, limits=False); p.produce(T, b'v', headers=Headers.from_confluent(HEADERS).copy())",  # noqa: E501
    "wrapped producer": "p = wrap_producer(confluent_kafka.Producer(CONF), limits=None); p.produce(T, b'v', headers=HEADERS)",  # noqa: E501
    "interceptor adds the key": "p = Producer(CONF, interceptors=[Adds()]); p.produce(T, b'v')",
    "dead-letter publisher": "p = confluent_kafka.Producer(CONF); DeadLetterPublisher(p, 'dlt').publish(Message(topic=T, partition=0, offset=1, key=b'k', value=b'v', headers=HEADERS), ValueError('x'))",  # noqa: E501
    "async producer": "p = Producer(CONF); asyncio.run(aio_produce(HEADERS))",
    "async producer send()": "p = Producer(CONF); asyncio.run(aio_send(HEADERS))",
    "write_state": "p = confluent_kafka.Producer(CONF); write_state({b'k': StateEntry(b'k', b'v', HEADERS, None, 0, 0, 0)}, p, T)",  # noqa: E501
}

CHILD = textwrap.dedent(
    """
    import json, sys
    import confluent_kafka
    from confluent_kafka import Message
    from kheaders import Headers, Producer, ProducerRecord, wrap_producer
    from kheaders.deadletter import DeadLetterPublisher
    from kheaders.compaction import StateEntry, write_state

    CONF = {"bootstrap.servers": sys.argv[1], "message.timeout.ms": 5000}
    T = sys.argv[2]
    KEY = json.loads(sys.argv[3]).encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
    HEADERS = [("ok", b"1"), (KEY, b"secret-value")]
    CB = lambda err, msg: None

    import asyncio
    from kheaders.aio import AIOProducer

    async def aio_produce(headers):
        p = AIOProducer(CONF)
        try:
            await p.produce(T, b'v', headers=headers)
        finally:
            await p.close()

    async def aio_send(headers):
        p = AIOProducer(CONF)
        try:
            await p.send(ProducerRecord(T, b'v', headers=Headers.from_confluent(headers).copy()))
        finally:
            await p.close()

    class Noop:
        def on_send(self, record):
            return record

    class Adds:
        def on_send(self, record):
            list.append(record.headers, (KEY, b"secret-value"))  # behind the model's back
            return record

    for name, statement in json.loads(sys.argv[4]).items():
        print(json.dumps({"path": name, "outcome": "started"}), flush=True)
        try:
            exec(statement)
            out = {"outcome": "sent", "left": p.flush(10)}
        except Exception as exc:
            out = {"outcome": "raised", "type": type(exc).__name__, "message": str(exc)}
        print(json.dumps({"path": name, **out}), flush=True)
    """
)


def _run(
    bootstrap: str, topic: str, key: str, paths: dict[str, str]
) -> dict[str, dict[str, object]]:
    """Run ``paths`` in one child; return each path's outcome. Fails naming a path that crashed."""
    result = subprocess.run(
        [sys.executable, "-c", CHILD, bootstrap, topic, json.dumps(key), json.dumps(paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    outcomes = {line["path"]: line for line in lines}
    crashed = [name for name, line in outcomes.items() if line["outcome"] == "started"]
    assert result.returncode == 0, (
        f"child died with {result.returncode} (SIGSEGV is -11) on path {crashed}:"
        f" {result.stderr[-2000:]}"
    )
    return outcomes


@pytest.mark.integration
@pytest.mark.parametrize("bad", ["lone surrogate", "NUL"])
def test_bad_header_key_is_refused_before_librdkafka_on_every_produce_path(
    bootstrap: str, topic: str, bad: str
) -> None:
    key = BAD_KEYS[bad]
    outcomes = _run(bootstrap, topic, key, PATHS)
    assert sorted(outcomes) == sorted(PATHS)
    for path, outcome in outcomes.items():
        assert outcome["outcome"] == "raised", (path, outcome)
        assert outcome["type"] == "InvalidNameError", (path, outcome)
        assert repr(key) in str(outcome["message"]), (path, outcome)
        assert "secret-value" not in str(outcome["message"]), (path, outcome)


@pytest.mark.integration
def test_refused_records_never_reach_the_topic(bootstrap: str, topic: str) -> None:
    """Nothing is written in place of a refused record (NUL used to arrive cut, as 'a')."""
    for key in BAD_KEYS.values():
        _run(bootstrap, topic, key, {"plain": PATHS["plain produce"]})
    with Producer({"bootstrap.servers": bootstrap}) as p:
        p.produce(topic, b"marker", headers=[("é/ключ/🔑", b"\x00\xff")])
        assert p.flush(10) == 0
    consumer = RawConsumer({"bootstrap.servers": bootstrap, "group.id": "key-rule"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = []
    deadline = time.monotonic() + 15
    while not got and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append((msg.value(), msg.headers()))
    consumer.close()
    assert got == [(b"marker", [("é/ключ/🔑", b"\x00\xff")])]


@pytest.mark.parametrize("key", [*BAD_KEYS.values(), ""])
def test_headers_model_refuses_bad_keys_naming_them(key: str) -> None:
    for build in (
        lambda: Headers([(key, b"secret-value")]),
        lambda: Headers({key: b"secret-value"}),
        lambda: Headers().add(key, b"secret-value"),
        lambda: Headers().set(key, b"secret-value"),
        lambda: HeaderLimits().check([(key, b"secret-value")]),
        lambda: check_keys([(key, b"secret-value")]),
    ):
        with pytest.raises(InvalidNameError) as caught:
            build()
        assert isinstance(caught.value, KHeadersError)
        assert isinstance(caught.value, ValueError)
        assert "secret-value" not in str(caught.value)
        assert (repr(key) in str(caught.value)) if key else "empty" in str(caught.value)


def test_str_subclass_is_checked_by_its_text_not_its_overrides() -> None:
    class Sly(str):
        def encode(self, *args: object, **kwargs: object) -> bytes:  # type: ignore[override]
            return b"fine"

    with pytest.raises(InvalidNameError, match="NUL"):
        Headers([(Sly("a\x00b"), b"v")])
    h = Headers([(Sly("plain"), b"v")])
    assert [type(k) for k, _ in h] == [str]


def test_known_keys_are_remembered_with_their_utf8_size() -> None:
    assert key_size("préfixe") == len("préfixe".encode())
    assert KEY_SIZES["préfixe"] == 8
    assert "a\x00b" not in KEY_SIZES


NAME_CHILD = textwrap.dedent(
    """
    import json, sys
    from kheaders import Consumer, Producer
    B = sys.argv[1]
    CASES = {
        "group.id with a lone surrogate": lambda: Consumer({"bootstrap.servers": B, "group.id": "g\\udcff"}),
        "setting name with a lone surrogate": lambda: Producer({"bootstrap.servers": B, "client.id\\udcff": "x"}),
        "client.id with a lone surrogate": lambda: Producer({"bootstrap.servers": B, "client.id": "a\\udcff"}),
        "sasl.password with NUL": lambda: Producer({"bootstrap.servers": B, "sasl.password": "pa\\x00ss"}),
        "subscribe to a lone surrogate": lambda: Consumer({"bootstrap.servers": B, "group.id": "g"}).subscribe(["t\\udcff"]),
        "subscribe to a name with NUL": lambda: Consumer({"bootstrap.servers": B, "group.id": "g"}).subscribe(["t\\x00x"]),
    }
    for name, case in CASES.items():
        print(json.dumps({"path": name, "outcome": "started"}), flush=True)
        try:
            case()
            out = {"outcome": "accepted"}
        except Exception as exc:
            out = {"outcome": "raised", "type": type(exc).__name__, "message": str(exc)}
        print(json.dumps({"path": name, **out}), flush=True)
    """  # noqa: E501
)


def test_settings_and_topic_names_librdkafka_cannot_take_are_refused(bootstrap: str) -> None:
    """The same C-string class at the other edges: config (SIGSEGV, an assertion abort, or a
    value cut at NUL) and subscribe (SIGSEGV, or a subscription to the text before a NUL)."""
    result = subprocess.run(
        [sys.executable, "-c", NAME_CHILD, bootstrap],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    outcomes = {line["path"]: line for line in lines}
    crashed = [name for name, line in outcomes.items() if line["outcome"] == "started"]
    assert result.returncode == 0, f"died with {result.returncode} on {crashed}: {result.stderr}"
    assert len(outcomes) == 6
    for name, outcome in outcomes.items():
        expected = "InvalidNameError" if name.startswith("subscribe") else "ConfigurationError"
        assert (outcome["outcome"], outcome["type"]) == ("raised", expected), (name, outcome)
        assert "pa\x00ss" not in outcome["message"], "a setting's value is never shown"
