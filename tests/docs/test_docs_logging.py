"""docs/logging.md: each example runs, in order in one namespace, and does what its text says."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from kheaders import configure_logging
from kheaders._log import get_logger
from kheaders._logsetup import JSON_ENV, LEVEL_ENV

DOC = Path(__file__).resolve().parents[2] / "docs" / "logging.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


@pytest.fixture(autouse=True)
def pristine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(LEVEL_ENV, raising=False)
    monkeypatch.delenv(JSON_ENV, raising=False)
    structlog.reset_defaults()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging()
    yield
    configure_logging()
    structlog.reset_defaults()
    root.handlers[:], root.level = handlers, level


def run(block: str, scope: dict[str, Any]) -> None:
    exec(compile(block, str(DOC), "exec"), scope)


def test_the_document_has_the_examples_this_test_runs() -> None:
    assert len(BLOCKS) == 4


def test_the_examples_do_what_the_text_says(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    scope: dict[str, Any] = {"__name__": "logging_doc"}
    log = get_logger("kheaders.docs")

    log.info("before.any.setting")
    assert capfd.readouterr().err == ""  # quiet by default: warnings and up

    run(BLOCKS[0], scope)  # the level
    log.info("an.info.event", n=1)
    out, err = capfd.readouterr()
    assert "an.info.event" in err
    assert out == ""

    run(BLOCKS[1], scope)  # JSON lines
    log.warning("a.json.event", topic="orders")
    log.info("below.the.default")  # each call replaces every setting: the level is warning again
    (line,) = capfd.readouterr().err.splitlines()
    event = json.loads(line)
    assert {k: event[k] for k in ("event", "level", "logger", "topic")} == {
        "event": "a.json.event",
        "level": "warning",
        "logger": "kheaders.docs",
        "topic": "orders",
    }
    assert event["timestamp"].endswith("Z")

    run(BLOCKS[2], scope)  # into stdlib logging
    with caplog.at_level(logging.INFO):
        log.info("a.stdlib.event", topic="orders")
        log.debug("filtered.by.stdlib")
    records = [r for r in caplog.records if r.name == "kheaders.docs"]
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (logging.INFO, "a.stdlib.event topic='orders'")
    ]
    assert records[0].kheaders == {"topic": "orders"}  # type: ignore[attr-defined]
    capfd.readouterr()

    run(BLOCKS[3], scope)  # librdkafka's lines, a broker nobody runs
    err = capfd.readouterr().err
    assert "|FAIL|" not in err  # librdkafka wrote nothing itself
    told = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert len(told) == len(err.splitlines())  # every line is a JSON object
    from_librdkafka = [e for e in told if e["logger"] == "kheaders.librdkafka"]
    assert [(e["event"], e["broker"]) for e in from_librdkafka] == [
        ("broker.unreachable", "localhost:1")
    ]
    assert "Connection refused" in from_librdkafka[0]["reason"]
    assert [e["event"] for e in told if e["logger"] == "kheaders.producer"] == [
        "records not delivered before close; purged"
    ]
