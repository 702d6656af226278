"""The share-group examples of docs/processing.md and docs/clients.md (``Elsewhere`` entries
of tests/docs/test_docs_examples.py), run as written on the Apache Kafka broker."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import confluent_kafka
import pytest

from tests.share.conftest import configure_group, produce

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / doc).read_text(), re.S)


def _share_blocks(doc: str, heading: str) -> list[str]:
    text = (ROOT / "docs" / doc).read_text()
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


PROCESSING = _share_blocks("processing.md", "## Share groups (KIP-932): `ShareProcessor`")
CLIENTS = _share_blocks("clients.md", "## ShareConsumer: share groups (KIP-932)")


def test_the_share_sections_are_the_last_blocks_of_their_documents() -> None:
    assert len(PROCESSING) == 2
    assert _blocks("processing.md")[-2:] == PROCESSING
    assert len(CLIENTS) == 1
    assert _blocks("clients.md")[-1:] == CLIENTS


def _dead_letters(bootstrap: str, topic: str, n: int) -> list[confluent_kafka.Message]:
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": uuid.uuid4().hex,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    got: list[confluent_kafka.Message] = []
    end = time.monotonic() + 60
    while len(got) < n:
        assert time.monotonic() < end, f"{len(got)} of {n} dead letters"
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg)
    consumer.close()
    return got


def test_the_processing_service_accepts_retries_by_delivery_count_and_dead_letters(
    bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory()
    group = f"billing-share-{uuid.uuid4().hex[:8]}"
    admin_block, service = PROCESSING
    exec(  # the group's settings, as the text sets them
        admin_block.replace('"localhost:9092"', repr(bootstrap)).replace(
            '"billing-share"', repr(group)
        ),
        {},
    )
    orders = [{"id": 1, "amount": 10}, {"id": 2, "amount": -1}, {"id": 3, "amount": 5, "flaky": 1}]
    produce(bootstrap, topic, [(None, json.dumps(o).encode(), []) for o in orders])
    script = tmp_path / "service.py"
    script.write_text(
        service.replace('"orders"', repr(topic)).replace('"billing-share"', repr(group))
    )
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as sink, err.open("w") as errors:
        proc = subprocess.Popen(
            [sys.executable, str(script)],
            stdout=sink,
            stderr=errors,
            env={**os.environ, "KHEADERS_BOOTSTRAP": bootstrap, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        )
        try:
            end = time.monotonic() + 90
            while out.read_text().count("charged") < 2:
                assert time.monotonic() < end, out.read_text()
                assert proc.poll() is None, err.read_text()
                time.sleep(0.1)
            (letter,) = _dead_letters(bootstrap, f"{topic}-dlt", 1)
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 0
    assert sorted(out.read_text().splitlines()) == [
        "charged order 1 on delivery 1",
        "charged order 3 on delivery 3",  # released twice, then accepted
    ]
    assert json.loads(letter.value() or b"")["id"] == 2
    headers = dict(letter.headers() or [])
    assert headers["kheaders.dlt.error.type"] == b"__main__.PaymentDeclined"
    assert headers["kheaders.dlt.consumer.group"] == group.encode()


def test_the_share_consumer_example_accepts_releases_and_rejects(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    group = f"audit-share-{uuid.uuid4().hex[:8]}"
    configure_group(bootstrap, group)
    produce(
        bootstrap,
        topic,
        [
            (None, b"hello", [("source", b"app")]),
            (None, b"", [("source", b"app")]),
            (None, b"ignored", [("source", b"test")]),
        ],
    )
    printed: list[str] = []
    end = time.monotonic() + 60

    def running() -> bool:
        return time.monotonic() < end and len(printed) < 2

    def print_(*args: object) -> None:  # the example's print(), apart from any log line
        printed.append(" ".join(map(str, args)))

    code = (
        CLIENTS[0]
        .replace('"localhost:9092"', repr(bootstrap))
        .replace('"audit-share"', repr(group))
        .replace('"audit"', repr(topic))
    )
    exec(code, {"running": running, "print": print_})
    assert sorted(printed) == [" 3", "hello 1"]
