"""Reading dead letters: ``kheaders tail`` on a dead-letter topic and ``kheaders dlt replay
--dry-run`` say where each record came from and why it failed, and nothing a record carries
can drive the terminal."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from contextlib import redirect_stdout
from pathlib import Path

import confluent_kafka
import pytest
from confluent_kafka import Message

from kheaders.cli import main
from kheaders.cli._tail import format_record
from kheaders.deadletter import dead_letter_headers, spring_headers
from kheaders.redaction import Redactor

ROOT = Path(__file__).resolve().parents[2]
ADDRESS = ["--bootstrap", "127.0.0.1:1"]  # nothing listens there


class PaymentDeclined(Exception):
    """A handler's own exception, as an application raises it."""


def _failed(message: str) -> PaymentDeclined:
    try:
        raise PaymentDeclined(message)
    except PaymentDeclined as exc:  # with a traceback: the stacktrace header has lines
        return exc


def _spring(
    error: BaseException, next_attempt: int = 2, offset: int = 42
) -> list[tuple[str, bytes | None]]:
    return spring_headers(
        [("trace", b"t")],
        topic="orders",
        partition=1,
        offset=offset,
        timestamp=(1, 1_700_000_000_000),
        group="billing",
        error=error,
        next_attempt=next_attempt,
        due_ms=1_700_000_001_500,
    )


def _record(topic: str, headers: Sequence[tuple[str, bytes | None]]) -> Message:
    return Message(
        topic=topic,
        partition=0,
        offset=3,
        key=b"k",
        value=b"v",
        headers=list(headers),
        timestamp=(1, 1_700_000_000_000),
    )


FQCN = f"{__name__}.PaymentDeclined"


def test_a_stack_trace_prints_as_indented_text_lines_not_hex() -> None:
    text = format_record(_record("orders-dlt", _spring(_failed("card expired"))), Redactor())
    lines = text.splitlines()
    start = lines.index("    kafka_exception-stacktrace: |")
    assert lines[start + 1] == "      Traceback (most recent call last):"
    assert f"      {FQCN}: card expired" in lines[start + 2 :]
    assert not any(line.startswith("    kafka_exception-stacktrace: 0x") for line in lines)


def test_a_dead_letter_has_no_next_attempt_and_its_failure_says_the_message() -> None:
    text = format_record(_record("orders-dlt", _spring(_failed("card expired"))), Redactor())
    assert "retry:" not in text
    assert "  dead letter: failed after attempt 1; no further attempt" in text
    assert "  original: orders[1]@42 at 2023-11-14T22:13:20.000Z (group billing)" in text
    assert f"  failed: {FQCN}: card expired" in text


def test_a_retry_record_keeps_its_next_attempt_and_shows_the_message_too() -> None:
    text = format_record(_record("orders-retry", _spring(_failed("card expired"))), Redactor())
    assert "  retry: next attempt 2, due 2023-11-14T22:13:21.500Z" in text
    assert "dead letter" not in text
    assert f"  failed: {FQCN}: card expired" in text


def test_a_kheaders_dead_letter_after_retries_is_a_dead_letter_whatever_its_topic() -> None:
    retried = _record("orders-retry-2", _spring(ValueError("first"), next_attempt=3))
    headers = dead_letter_headers(retried, ValueError("bad json"), group_id="billing").to_list()
    text = format_record(_record("anything", headers), Redactor())
    assert "retry:" not in text  # the retry hops' headers are history, not a plan
    assert "  dead letter: failed after attempt 2; no further attempt" in text
    assert "  original: orders[1]@42 at 2023-11-14T22:13:20.000Z (group billing)" in text
    assert "  failed: builtins.ValueError: bad json" in text


def test_control_characters_in_a_text_header_are_escaped_and_non_utf8_stays_hex() -> None:
    headers = _spring(_failed("\x1b[2J\x1b]0;owned\x07 declined"))
    headers += [("notes", b"line one\r\nline\ttwo\n"), ("blob", b"\xff\n\x00")]
    headers += [("id", b"\x01\x02\n\x03"), ("nul", b"a\nb\x00")]  # UTF-8, still binary
    text = format_record(_record("orders-dlt", headers), Redactor())
    assert not any(c in text for c in "\x1b\x07\r\x00")
    assert f"  failed: {FQCN}: \\x1b[2J\\x1b]0;owned\\x07 declined" in text
    assert f"      {FQCN}: \\x1b[2J\\x1b]0;owned\\x07 declined" in text  # in the trace too
    assert "    notes: |\n      line one\n      line    two\n" in text
    assert "    blob: 0xff0a00" in text
    assert "    id: 0x01020a03\n    nul: 0x610a6200\n" in text


def test_a_credential_in_a_multi_line_header_is_still_redacted() -> None:
    token = b"ghp_" + b"a1" * 18
    headers = [("kafka_exception-message", b"login failed\nwith token " + token)]
    text = format_record(_record("orders-dlt", headers), Redactor())
    assert token.decode() not in text
    assert "kafka_exception-message: <redacted>" in text


@pytest.mark.integration
def test_dry_run_shows_key_original_offset_and_exception_per_record(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    dlt = topic_factory()
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for i in range(2):
        headers = _spring(_failed(f"card {i} expired"), offset=100 + i)
        producer.produce(dlt, key=f"k{i}".encode(), value=b"v", headers=headers)  # type: ignore[arg-type]
    assert producer.flush(15) == 0
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["dlt", "replay", dlt, "--bootstrap", bootstrap, "--dry-run", "--timeout", "2"])
    assert code == 0
    lines = out.getvalue().splitlines()
    assert lines == [
        f"{dlt}[0]@{i} -> orders  key=k{i}  original=orders[1]@{100 + i}"
        f"  failed={FQCN}: card {i} expired"
        for i in range(2)
    ] + [f"would replay 2 of 2 records read from {dlt}"]


@pytest.mark.parametrize("dry_run", [["--dry-run"], []], ids=["dry-run", "replay"])
def test_replay_against_an_unreachable_broker_names_it_in_one_line(dry_run: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kheaders.cli", "dlt", "replay", "orders.dlt", *dry_run, *ADDRESS],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "kheaders dlt replay: cannot read topic 'orders.dlt' from 127.0.0.1:1: Failed to get"
        " metadata: Local: Broker transport failure"
    ]
    assert done.stdout == ""


def test_the_dead_letter_shown_in_docs_demo_is_what_tail_prints() -> None:
    doc = (ROOT / "docs" / "demo.md").read_text().split("### Reading a dead letter", 1)[1]
    shown = doc.split("```\n", 2)[1]
    stack = (
        "Traceback (most recent call last):\n"
        '  File "/srv/payments/handlers.py", line 41, in charge\n'
        '    raise PaymentDeclined(f"card {card} expired")\n'
        "payments.PaymentDeclined: card 4242 expired\n"
    )
    error = PaymentDeclined("card 4242 expired")
    headers = spring_headers(
        [("traceparent", b"00-2152a625df166f1c354ccfc1d11acfa0-92bacdcc011350ce-01")],
        topic="payments",
        partition=1,
        offset=1207,
        timestamp=(1, 1_795_800_082_218),
        group="billing",
        error=error,
        next_attempt=2,
        due_ms=1_795_800_083_020,
    )
    headers = [
        (k, stack.encode() if k == "kafka_exception-stacktrace" else v)  # no paths of this run
        for k, v in headers
    ]
    msg = Message(
        topic="payments-dlt",
        partition=1,
        offset=17,
        key=b"order-00042",
        value=b'{"order":"order-00042","amount":1200}',
        headers=headers,  # type: ignore[arg-type]
        timestamp=(1, 1_795_800_082_218),
    )
    text = format_record(msg, Redactor()).replace(FQCN, "payments.PaymentDeclined")
    assert text + "\n" == shown


def test_a_plain_spring_dead_letter_is_decoded_too() -> None:
    """Spring's DeadLetterPublishingRecoverer without retry topics: ``kafka_dlt-*`` headers."""
    headers: list[tuple[str, bytes | None]] = [
        ("kafka_dlt-original-topic", b"orders"),
        ("kafka_dlt-original-partition", (2).to_bytes(4, "big")),
        ("kafka_dlt-original-offset", (7).to_bytes(8, "big")),
        ("kafka_dlt-exception-fqcn", b"com.example.PaymentDeclined"),
        ("kafka_dlt-exception-message", b"card expired"),
    ]
    text = format_record(_record("orders.DLT", headers), Redactor())
    assert "  dead letter: failed; no further attempt" in text
    assert "  original: orders[2]@7" in text
    assert "  failed: com.example.PaymentDeclined: card expired" in text
