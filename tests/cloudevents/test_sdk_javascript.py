"""The CloudEvents JavaScript SDK itself (``cloudevents`` 10.0.0 on npm, pinned with its
lockfile in tests/cloudevents/js/) writes events under Node; kheaders reads them as the
events the SDK wrote (issue 35, item 15).

The SDK's binary mode writes ``datacontenttype`` both as ``content-type`` and as
``ce_datacontenttype``, and every optional attribute the event left out as a header kafkajs
sends null. ``js/write_events.js`` turns each message into the record kafkajs sends (see its
comment); the records then cross a real broker through a raw confluent-kafka producer.
Needs Node and npm (a fresh ``npm ci`` takes a few seconds; the npm cache makes it offline).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import TopicPartition

from kheaders import Consumer, Headers
from kheaders.cloudevents import CloudEventDeserializer, Event

JS = Path(__file__).resolve().parent / "js"
DATA = {
    ("json", "binary"): {"a": [1, "é"]},  # content-type application/json: decoded
    ("json", "structured"): '{"a":[1,"é"]}',  # the SDK puts the text in "data" as a string
    ("none", "binary"): None,
    ("none", "structured"): None,
    ("bytes", "binary"): b"\xff\x00\x01",
    ("bytes", "structured"): b"\xff\x00\x01",  # data_base64
    ("text", "binary"): "héllo",
    ("text", "structured"): "héllo",
}


def _run(command: list[str], cwd: Path, timeout: float) -> str:
    executable = shutil.which(command[0])
    assert executable is not None, f"{command[0]} is needed (Node 20 with npm) and not on PATH"
    done = subprocess.run(
        [executable, *command[1:]],
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stderr[-2000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def js_records(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """What write_events.js prints, after ``npm ci`` of the pinned SDK in a scratch copy."""
    work = tmp_path_factory.mktemp("cloudevents-js")
    for name in ("package.json", "package-lock.json", "write_events.js"):
        shutil.copy(JS / name, work / name)
    _run(["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund"], work, timeout=300)
    records: list[dict[str, Any]] = json.loads(_run(["node", "write_events.js"], work, 60))
    return records


def unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def pairs(record: dict[str, Any]) -> list[tuple[str, str | bytes | None]]:
    return [(k, unb64(v)) for k, v in record["headers"]]


def check(record: dict[str, Any], event: Event) -> None:
    """``event`` holds the attributes the SDK wrote (its JSON, undefined ones left out) and
    the data it carried."""
    expected = dict(record["attributes"])
    expected["time"] = datetime.fromisoformat(expected["time"].replace("Z", "+00:00"))
    assert dict(event.attributes) == expected, (record["case"], record["mode"])
    assert event.data == DATA[record["case"], record["mode"]], (record["case"], record["mode"])


def test_the_sdk_writes_what_the_issue_says(js_records: list[dict[str, Any]]) -> None:
    """The habits this file is about are there (else it would test nothing)."""
    binary = next(r for r in js_records if (r["case"], r["mode"]) == ("json", "binary"))
    found = dict(pairs(binary))
    assert found["content-type"] == found["ce_datacontenttype"] == b"application/json"
    assert found["ce_dataschema"] is None
    assert unb64(binary["key"]) == b"order-7"
    assert len(js_records) == len(DATA)


def test_records_the_js_sdk_writes_read_as_its_events(js_records: list[dict[str, Any]]) -> None:
    for record in js_records:
        headers = Headers(pairs(record)).close()
        event = CloudEventDeserializer().deserialize("t", headers, unb64(record["value"]))
        check(record, event)


@pytest.mark.integration
def test_records_the_js_sdk_writes_cross_the_broker_and_read_as_its_events(
    js_records: list[dict[str, Any]], bootstrap: str, topic: str
) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for record in js_records:
        producer.produce(topic, unb64(record["value"]), unb64(record["key"]), headers=pairs(record))
    assert producer.flush(30) == 0
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"js-{uuid.uuid4().hex[:8]}"},
        value_deserializer=CloudEventDeserializer(),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    deadline = time.monotonic() + 30
    while len(got) < len(js_records) and time.monotonic() < deadline:
        got.extend(m for m in consumer.consume(len(js_records), 0.5) if m.error() is None)
    consumer.close()
    assert len(got) == len(js_records)
    for record, msg in zip(js_records, got, strict=True):
        check(record, msg.value())
        assert msg.key() == unb64(record["key"])
