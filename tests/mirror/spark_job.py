"""The Spark form of the mirror on a real (local-cluster) Spark: run by test_spark_mirror.py.

``python tests/mirror/spark_job.py A B WORKDIR``: docs/mirror.md's Spark examples with the
docs' routing table; the batch copies are compared record by record with what ``Mirror``
would send (``Copier``); the streaming example runs twice over a checkpoint with records
added between. Prints one JSON line of findings. A process of its own: one SparkContext each.
"""

from __future__ import annotations

import json
import re
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from kheaders.broker import create_topic
from kheaders.mirror import HOPS
from kheaders.mirror._copy import Copier
from tests.mirror.conftest import CLUSTER_B, read_all
from tests.spark.cluster_job import _executors, _session

DOC = Path(__file__).resolve().parents[2] / "docs" / "mirror.md"
B_ID = CLUSTER_B  # cluster B's id, as its broker reports it (the conftest starts it so)

# (topic, key, headers): the docs' cases, a copy that already visited B, refused hops
RECORDS: list[tuple[str, bytes, list[tuple[str, bytes | None]]]] = [
    ("orders", b"k1", [("region", b"eu")]),
    ("orders", b"k2", [("region", b"us"), ("region", b"uk")]),
    ("orders", b"k3", [("region", b"eu"), ("region", b"us")]),
    ("orders", b"k4", [("kind", b"test"), ("region", b"eu")]),
    ("orders", b"k5", [("priority", b"high"), ("n", None), ("n", b"")]),
    ("payments", b"k6", [("region", b"eu"), ("tenant", b"acme")]),
    ("payments", b"k7", []),
    ("payments", b"k8", [("tenant", None)]),
    ("orders", b"k9", [(HOPS, f"elsewhere,{B_ID}".encode())]),
    ("orders", b"k10", [(HOPS, b"elsewhere")]),
    ("orders", b"k11", [(HOPS, b"bad,,hops")]),
]


def _localised(code: str, suffix: str, a: str, b: str, work: Path) -> str:
    code = code.replace('"localhost:9092"', repr(a)).replace('"localhost:9093"', repr(b))
    code = code.replace('"/tmp/mirror-checkpoint"', repr(str(work / "checkpoint")))
    for name in ("orders", "payments", "no-tenant"):
        code = code.replace(f'"{name}"', f'"{name}-{suffix}"')
    return code


def _produce(a: str, suffix: str, records: list[tuple[str, bytes, Any]]) -> None:
    producer = Producer({"bootstrap.servers": a})
    for i, (topic, key, headers) in enumerate(records):
        producer.produce(
            f"{topic}-{suffix}", b"v-" + key, key, timestamp=1_700_000_000_000 + i, headers=headers
        )
    assert producer.flush(30) == 0


def _copies(bootstrap: str, topics: list[str]) -> list[tuple[Any, ...]]:
    out = []
    for topic in topics:
        for m in read_all(bootstrap, topic, 0, timeout=5, quiet=0.5):
            out.append((m.topic(), m.key(), m.value(), m.headers(), m.timestamp()[1]))
    return sorted(out, key=repr)


def main(a: str, b: str, work: Path) -> dict[str, object]:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    routing, batch, streaming = blocks[0], blocks[3], blocks[4]
    began = time.monotonic()
    laps: dict[str, float] = {}

    def lap(name: str) -> None:
        laps[name] = round(time.monotonic() - began, 1)

    spark = _session("local-cluster[2,1,1024]", sys.executable)
    lap("session")
    found: dict[str, object] = {"executor_jvms": _executors(spark.sparkContext)}
    try:
        a_id = str(AdminClient({"bootstrap.servers": a}).list_topics(timeout=10).cluster_id)
        one, two = uuid.uuid4().hex[:6], uuid.uuid4().hex[:6]
        targets = ("orders", "orders-eu", "orders-urgent", "payments", "payments-urgent")
        for suffix in (one, two):
            for topic in ("orders", "payments", "orders-dlt", "payments-dlt"):
                name = topic.replace("orders", f"orders-{suffix}").replace(
                    "payments", f"payments-{suffix}"
                )
                create_topic(a, name, partitions=2 if topic == "orders" else 1)
            for topic in (*targets, "no-tenant"):
                name = re.sub(r"^(orders|payments|no-tenant)", rf"\1-{suffix}", topic)
                create_topic(b, name, partitions=2 if topic == "orders" else 1)
        namespace: dict[str, Any] = {"spark": spark}

        # batch: the docs' example; every copy as Mirror would make it
        _produce(a, one, RECORDS)
        exec(_localised(routing, one, a, b, work), namespace)
        lap("topics")
        exec(_localised(batch, one, a, b, work), namespace)
        lap("batch")
        copier = Copier(namespace["table"], a_id, B_ID)
        expected = []
        refused = []
        for topic in (f"orders-{one}", f"payments-{one}"):
            for m in read_all(a, topic, 0, timeout=5, quiet=0.5):
                headers = m.headers() or []
                try:
                    _, to, out = copier.prepare(topic, m.partition(), m.offset(), headers)
                except ValueError:
                    refused.append(m.value())
                    continue
                for target in to:
                    expected.append((target, m.key(), m.value(), out, m.timestamp()[1]))
        lap("expected")
        names = [re.sub(r"^(orders|payments)", rf"\1-{one}", t) for t in targets]
        copies = _copies(b, [*names, f"no-tenant-{one}"])
        found["batch_copies"] = len(copies)
        found["batch_equal"] = copies == sorted(expected, key=repr)
        dead = read_all(a, f"orders-{one}-dlt", 1, timeout=30)
        found["dead"] = [m.value().decode() for m in dead]
        found["refused"] = [v.decode() for v in refused]
        found["dead_reason"] = (
            dict(dead[0].headers()).get("kheaders.dlt.error.message", b"").decode()
        )

        lap("batch-read")
        # streaming: two runs over one checkpoint, records added between
        exec(_localised(routing, two, a, b, work), namespace)
        code = _localised(streaming, two, a, b, work)
        _produce(a, two, RECORDS[:5])
        exec(code, namespace)
        lap("stream1")
        _produce(a, two, RECORDS[5:8])
        exec(code, namespace)
        lap("stream2")
        names = [re.sub(r"^(orders|payments)", rf"\1-{two}", t) for t in targets]
        streamed = _copies(b, [*names, f"no-tenant-{two}"])
        found["streamed"] = sorted(k.decode() for _, k, _, _, _ in streamed)
        found["streamed_hops"] = sorted({dict(h)[HOPS].decode() for _, _, _, h, _ in streamed})
        found["a_id"] = a_id
        lap("end")
        found["laps"] = laps
    finally:
        spark.stop()
    return found


if __name__ == "__main__":
    result = main(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
    print("RESULT " + json.dumps(result), flush=True)
