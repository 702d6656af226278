"""Hostile header keys on the produce side, through the real broker.

Any ``str`` (lone surrogates, NUL, empty, any script) and any ``bytes`` (as keys, and decoded
with ``surrogateescape`` as ``os.fsdecode`` does) go to ``kheaders.Producer`` on its three
ways in (plain ``produce``, ``produce`` through an interceptor, ``send``). Every record is
either refused before librdkafka sees it, with a clear error naming the key (never a value),
or delivered with its headers byte for byte. The records are produced in a child process, so
an interpreter crash fails the test instead of ending the run.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kheaders._compiled import ENV
from kheaders.broker import create_topic
from tests.support.cores import Core

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

KEYS = st.one_of(
    st.text(max_size=12),  # any str: surrogates, NUL, empty included
    st.binary(max_size=12).map(lambda b: b.decode("utf-8", "surrogateescape")),  # fsdecode'd
    st.binary(min_size=1, max_size=8),  # a bytes key: never str()-ed
    st.sampled_from(["k\udcff", "a\x00b", "", "\x00", "\ud800x", "é", "🔑", "\u202e"]),
)
# a marker no key's repr can contain, so an echoed value is recognised in a message
VALUES = st.none() | st.binary(max_size=16).map(lambda b: b"\xfe\xffVAL" + b)
RECORDS = st.lists(
    st.lists(st.tuples(KEYS, VALUES), min_size=1, max_size=4), min_size=20, max_size=40
)

CHILD = textwrap.dedent(
    """
    import base64, json, sys
    import kheaders
    from kheaders import Producer, ProducerRecord, Headers
    print(json.dumps({"compiled": kheaders.COMPILED}), flush=True)

    def load(x):
        kind, data = x
        raw = base64.b64decode(data)
        return raw if kind == "bytes" else raw.decode("utf-8", "surrogatepass")

    class Noop:
        def on_send(self, record):
            return record

    bootstrap, topic = sys.argv[1], sys.argv[2]
    records = json.loads(sys.stdin.read())
    plain = Producer({"bootstrap.servers": bootstrap})
    chained = Producer({"bootstrap.servers": bootstrap}, interceptors=[Noop()])
    for i, pairs in enumerate(records):
        headers = [(load(k), None if v is None else base64.b64decode(v)) for k, v in pairs]
        print(json.dumps({"i": i, "outcome": "started"}), flush=True)
        try:
            if i % 3 == 0:
                plain.produce(topic, str(i).encode(), headers=headers)
            elif i % 3 == 1:
                chained.produce(topic, str(i).encode(), headers=headers)
            else:
                plain.send(ProducerRecord(topic, str(i).encode(), headers=Headers(headers)))
            out = {"outcome": "sent"}
        except Exception as exc:
            out = {"outcome": "refused", "type": type(exc).__name__, "message": str(exc)}
        print(json.dumps({"i": i, **out}), flush=True)
    print(json.dumps({"left": plain.flush(20) + chained.flush(20)}), flush=True)
    """
)


def _dump(key: str | bytes) -> list[str]:
    if isinstance(key, bytes):
        return ["bytes", base64.b64encode(key).decode()]
    return ["str", base64.b64encode(key.encode("utf-8", "surrogatepass")).decode()]


def _verdict(key: str | bytes) -> str | None:
    """The error the key rule must give, or None for a key that must arrive intact."""
    if not isinstance(key, str):
        return "TypeError"
    try:
        ok = bool(key) and "\x00" not in key and key.encode("utf-8") is not None
    except UnicodeEncodeError:
        ok = False
    return None if ok else "InvalidNameError"


def _consume(bootstrap: str, topic: str, want: int) -> dict[int, list[tuple[str, bytes | None]]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: dict[int, list[tuple[str, bytes | None]]] = {}
    deadline = time.monotonic() + 30
    while len(got) < want and time.monotonic() < deadline:
        for msg in consumer.consume(100, 0.5):
            if msg.error() is None:
                got[int(msg.value())] = msg.headers() or []
    consumer.close()
    return got


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(records=RECORDS)
def test_any_header_key_is_refused_clearly_or_delivered_byte_for_byte(
    core: Core, bootstrap: str, records: list[list[tuple[str | bytes, bytes | None]]]
) -> None:
    topic = create_topic(bootstrap, f"fuzz-keys-{uuid.uuid4().hex[:10]}")
    payload = [
        [[_dump(k), None if v is None else base64.b64encode(v).decode()] for k, v in pairs]
        for pairs in records
    ]
    result = subprocess.run(
        [sys.executable, "-c", CHILD, bootstrap, topic],
        input=json.dumps(payload),
        cwd=ROOT,
        env={**os.environ, **({} if core.compiled else {ENV: "1"})},  # the child's core
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    lines = [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
    outcomes: dict[int, dict[str, Any]] = {x["i"]: x for x in lines if "i" in x}
    crashed = [i for i, x in outcomes.items() if x["outcome"] == "started"]
    assert result.returncode == 0, (
        f"child died with {result.returncode} (SIGSEGV is -11) on record {crashed}:"
        f" {[records[i] for i in crashed]!r} {result.stderr[-2000:]}"
    )
    assert lines[-1] == {"left": 0}
    assert lines[0] == {"compiled": core.compiled}
    sent = {}
    for i, pairs in enumerate(records):
        outcome = outcomes[i]
        expected = [v for v in (_verdict(k) for k, _ in pairs) if v is not None]
        if not expected:
            assert outcome["outcome"] == "sent", (pairs, outcome)
            sent[i] = [(k, v) for k, v in pairs]
            continue
        assert outcome["outcome"] == "refused", (pairs, outcome)
        assert outcome["type"] == expected[0], (pairs, outcome)
        first_bad = next(k for k, _ in pairs if _verdict(k) is not None)
        if isinstance(first_bad, str):
            named = repr(first_bad)[:40] if first_bad else "empty"
            assert named in outcome["message"], (pairs, outcome)
        for _, value in pairs:
            if value is not None:
                assert repr(value)[2:-1] not in outcome["message"], "a value was echoed"
                assert value.hex() not in outcome["message"], "a value was echoed as hex"
    delivered = _consume(bootstrap, topic, len(sent))
    assert delivered == sent  # refused records never arrive; sent ones arrive byte for byte
