"""``kheaders tail``: records with their headers, text or hex, sensitive values redacted."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import confluent_kafka
import pytest

from kheaders.cli._tail import tail
from kheaders.redaction import Redactor

ROOT = Path(__file__).resolve().parents[2]
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def _produce(bootstrap: str, topic: str, records: list[dict[str, object]]) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for record in records:
        producer.produce(topic, **record)
    assert producer.flush(15) == 0


def _tail(bootstrap: str, topic: str, **kwargs: object) -> str:
    out = io.StringIO()
    options: dict[str, object] = {
        "redactor": Redactor(),
        "from_beginning": True,
        "timeout": 10.0,
        **kwargs,
    }
    assert tail(bootstrap, topic, out, **options) == 0  # type: ignore[arg-type]
    return out.getvalue()


@pytest.fixture
def sample(bootstrap: str, topic_factory: Callable[..., str]) -> str:
    topic = topic_factory()
    headers = [
        ("traceparent", TRACEPARENT.encode()),
        ("bin", b"\x00\xff"),
        ("Authorization", b"Bearer s3cret"),
        ("x-api-key", b"k-123"),
        ("x-user", b"alice"),
        ("nothing", None),
    ]
    _produce(
        bootstrap,
        topic,
        [
            {"key": b"order-1", "value": b'{"id": 1}', "headers": headers},
            {"key": b"\x01\x02", "value": b"\xff\xfe", "headers": []},
        ],
    )
    return topic


def test_tail_prints_text_and_hex_and_redacts_sensitive_headers(
    bootstrap: str, sample: str
) -> None:
    out = _tail(bootstrap, sample, limit=2)
    first, second = out.split(f"{sample}[0]@1")
    assert f"{sample}[0]@0" in first
    assert "(CreateTime)" in first
    assert "key=order-1" in first
    assert '  value: {"id": 1}' in first
    assert "  headers (6):" in first
    assert f"    traceparent: {TRACEPARENT}" in first
    assert "    bin: 0x00ff" in first
    assert "    Authorization: <redacted>" in first
    assert "    x-api-key: <redacted>" in first
    assert "    x-user: alice" in first
    assert "    nothing: <null>" in first
    assert "s3cret" not in out
    assert "k-123" not in out
    assert "key=0x0102" in second
    assert "  value: 0xfffe" in second
    assert "headers (0):" in second


def test_tail_no_redact_shows_secrets_and_redact_key_hides_more(
    bootstrap: str, sample: str
) -> None:
    shown = _tail(bootstrap, sample, limit=1, redactor=Redactor(enabled=False))
    assert "Authorization: Bearer s3cret" in shown
    assert "x-api-key: k-123" in shown
    hidden = _tail(bootstrap, sample, limit=1, redactor=Redactor(extra=("X-User",)))
    assert "x-user: <redacted>" in hidden
    assert "alice" not in hidden


def test_tail_reads_every_partition_without_a_group(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=3)
    _produce(bootstrap, topic, [{"value": f"p{p}".encode(), "partition": p} for p in range(3)])
    out = _tail(bootstrap, topic, limit=3)
    for p in range(3):
        assert f"{topic}[{p}]@0" in out
        assert f"value: p{p}" in out


def test_tail_with_a_group_subscribes(bootstrap: str, sample: str) -> None:
    out = _tail(bootstrap, sample, limit=2, group=f"tail-{uuid.uuid4().hex[:6]}", timeout=30.0)
    assert f"{sample}[0]@0" in out
    assert f"{sample}[0]@1" in out


def test_tail_starts_at_the_end_and_stops_after_the_idle_timeout(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    for n in range(3):  # one record per batch: the embedded broker (Tansu 0.6) reports the
        _produce(bootstrap, topic, [{"value": f"old-{n}".encode()}])  # end of a multi-record
    assert _tail(bootstrap, topic, from_beginning=False, timeout=1.0) == ""  # batch too early


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KHEADERS_BOOTSTRAP", None)
    return subprocess.run(
        [sys.executable, "-m", "kheaders.cli", "tail", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_tail_command_line(bootstrap: str, sample: str) -> None:
    result = _cli(
        sample,
        "--bootstrap",
        bootstrap,
        "--from-beginning",
        "--max",
        "1",
        "--timeout",
        "20",
        "--redact-key",
        "x-user",
    )
    assert result.returncode == 0, result.stderr
    assert "Authorization: <redacted>" in result.stdout
    assert "x-user: <redacted>" in result.stdout
    assert f"{sample}[0]@1" not in result.stdout  # --max 1
    shown = _cli(
        sample,
        "--bootstrap",
        bootstrap,
        "--from-beginning",
        "--max",
        "1",
        "--timeout",
        "20",
        "--no-redact",
    )
    assert "Authorization: Bearer s3cret" in shown.stdout


def test_tail_without_a_broker_address_says_so() -> None:
    result = _cli("orders")
    assert result.returncode == 2
    assert "--bootstrap" in result.stderr
    assert "KHEADERS_BOOTSTRAP" in result.stderr


HOSTILE_KEYS = [
    "x\x1b[2J\x1b[31mred",  # clear screen, colour
    "bell\a",
    "cr\roverwritten",
    "forged\n" + "t[0]@99  -  key=evil",  # a newline would print a fake record line
    "rtl\u202eevil",  # right-to-left override
    "ключ/é",
]


def test_peer_supplied_text_is_escaped_so_no_record_can_drive_the_terminal(
    bootstrap: str, topic: str
) -> None:
    _produce(
        bootstrap,
        topic,
        [{"key": b"k\x1b[2J", "value": b"v\a", "headers": [(k, b"1") for k in HOSTILE_KEYS]}],
    )
    text = _tail(bootstrap, topic, limit=1)
    lines = text.splitlines()
    assert all(line.isprintable() for line in lines), [
        line for line in lines if not line.isprintable()
    ]
    assert len(lines) == 3 + len(HOSTILE_KEYS)  # title, value, "headers (n):", one per header
    assert sum(line.startswith("t[0]@99") for line in lines) == 0
    assert "    x\\x1b[2J\\x1b[31mred: 1" in lines
    assert "    forged\\nt[0]@99  -  key=evil: 1" in lines
    assert "    rtl\\u202eevil: 1" in lines
    assert "    ключ/é: 1" in lines  # printable text stays as it is


def test_a_topic_name_and_an_error_from_the_broker_are_escaped_too() -> None:
    from confluent_kafka import Message

    from kheaders.cli._tail import format_record

    msg = Message(topic="evil\x1b]0;title\a", partition=0, offset=5, value=b"v", headers=None)
    text = format_record(msg, Redactor())
    assert all(line.isprintable() for line in text.splitlines())
    assert text.startswith("evil\\x1b]0;title\\x07[0]@5")


def test_an_undecodable_topic_argument_is_refused_clearly(bootstrap: str) -> None:
    env = {**os.environ, "KHEADERS_BOOTSTRAP": bootstrap}
    result = subprocess.run(
        [sys.executable, "-m", "kheaders.cli", "tail", os.fsdecode(b"bad\xff"), "--timeout", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "not encodable as UTF-8" in result.stderr
