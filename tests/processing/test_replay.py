"""``kheaders dlt replay`` round trips dead letters to their original topic, once;
``kheaders tail`` shows the retry and dead-letter headers decoded."""

from __future__ import annotations

import io
from collections.abc import Callable
from contextlib import redirect_stdout

import pytest
from confluent_kafka import Message

from kheaders.cli import main
from kheaders.cli._tail import format_record
from kheaders.deadletter import spring as sh
from kheaders.deadletter import spring_headers
from kheaders.redaction import Redactor
from tests.processing.helpers import produce, read_all

pytestmark = pytest.mark.integration


def _dead(topic: str, i: int, partition: int, tenant: bytes) -> dict[str, object]:
    app: list[tuple[str, bytes | None]] = [("tenant", tenant), ("dup", b"1"), ("dup", None)]
    headers = spring_headers(
        app,
        topic=topic,
        partition=partition,
        offset=100 + i,
        timestamp=(1, 1_700_000_000_000 + i),
        group="billing",
        error=ValueError("boom"),
        next_attempt=4,
        due_ms=1_700_000_009_000,
    )
    return {"key": f"k{i}".encode(), "value": f"v{i}".encode(), "headers": headers}


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def test_replay_round_trip_resets_retry_state_and_commits_its_progress(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    dlt = topic_factory()
    sent = produce(
        bootstrap,
        dlt,
        [_dead(topic, i, i % 2, b"acme" if i < 3 else b"other") for i in range(5)],
    )
    code, text = _cli("dlt", "replay", dlt, "--bootstrap", bootstrap, "--dry-run", "--timeout", "1")
    assert code == 0
    assert "would replay 5 of 5" in text
    code, text = _cli(
        "dlt",
        "replay",
        dlt,
        "--bootstrap",
        bootstrap,
        "--where",
        "tenant=acme",
        "--limit",
        "2",
        "--timeout",
        "1",
    )
    assert code == 0
    assert "replayed 2 of 2" in text, text
    code, text = _cli("dlt", "replay", dlt, "--bootstrap", bootstrap, "--timeout", "1")
    assert code == 0
    assert "replayed 5 of 5" in text, text  # its own group: all five
    code, text = _cli("dlt", "replay", dlt, "--bootstrap", bootstrap, "--timeout", "1")
    assert code == 0
    assert "replayed 0 of 0" in text, text  # progress committed: none twice
    dead_lettered_at = {s.value: s.timestamp[1] for s in sent}
    back = read_all(bootstrap, topic, 7)
    assert len(back) == 7
    for r in back:
        i = int((r.value or b"v0")[1:])
        assert r.partition == i % 2  # back to its original partition
        assert r.headers == [
            ("tenant", b"acme" if i < 3 else b"other"),
            ("dup", b"1"),
            ("dup", None),
        ]
        # the original's, from kafka_original-timestamp: not when it was dead-lettered
        assert r.timestamp == (1, 1_700_000_000_000 + i)
        assert dead_lettered_at[r.value] != 1_700_000_000_000 + i


def test_replay_refuses_a_record_without_an_origin_unless_told_where(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    dlt, target = topic_factory(), topic_factory()
    produce(bootstrap, dlt, [{"key": b"a", "value": b"orphan", "headers": [("x", b"1")]}])
    code, _ = _cli("dlt", "replay", dlt, "--bootstrap", bootstrap, "--timeout", "1")
    assert code == 1
    code, text = _cli(
        "dlt", "replay", dlt, "--bootstrap", bootstrap, "--to", target, "--timeout", "1"
    )
    assert code == 0
    assert "replayed 1 of 1" in text
    assert [r.value for r in read_all(bootstrap, target, 1)] == [b"orphan"]


def test_tail_shows_retry_and_dead_letter_headers_decoded() -> None:
    headers = spring_headers(
        [("trace", b"t")],
        topic="orders",
        partition=1,
        offset=42,
        timestamp=(1, 1_700_000_000_000),
        group="billing",
        error=KeyError("sku"),
        next_attempt=2,
        due_ms=1_700_000_001_500,
    )
    msg = Message(
        topic="orders-retry",
        partition=1,
        offset=3,
        key=b"k",
        value=b"v",
        headers=headers,
        timestamp=(1, 1_700_000_000_000),
    )
    text = format_record(msg, Redactor())
    assert (
        "retry: next attempt 2, due 2023-11-14T22:13:21.500Z, first 2023-11-14T22:13:20.000Z"
        in text
    )
    assert "original: orders[1]@42 at 2023-11-14T22:13:20.000Z (group billing)" in text
    assert "failed: builtins.KeyError" in text
    assert sh.ATTEMPTS in text  # the raw headers are still listed
