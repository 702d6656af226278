"""The pipeline job end to end on the real broker: winners to a topic and Parquet, trace report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from pyspark.sql import SparkSession

from kheaders.spark.pipeline import main, run_pipeline

T1 = "4bf92f3577b34da6a3ce929d0e0e4736"
T2 = "0af7651916cd43dd8448eb211c80319c"
BASE_MS = 1_700_000_000_000

Record = tuple[int, bytes, bytes | None, int, list[tuple[str, bytes | None]]]


def hdrs(
    version: int | None, trace: str | None, span: str, client: str
) -> list[tuple[str, bytes | None]]:
    out: list[tuple[str, bytes | None]] = [("client.id", client.encode())]
    if version is not None:
        out.append(("version", version.to_bytes(8, "big", signed=True)))
    if trace is not None:
        out.append(("traceparent", f"00-{trace}-{span}-01".encode()))
    return out


# (partition, key, value, timestamp offset ms, headers) in produce order.
RECORDS: list[Record] = [
    (0, b"k1", b"k1-v5", 0, hdrs(5, T1, "00000000000000a1", "orders")),
    (0, b"k1", b"k1-v3", 250, hdrs(3, T1, "00000000000000a2", "billing")),  # older version
    (1, b"k2", b"k2-v1", 600, hdrs(1, T1, "00000000000000a3", "shipping")),
    (1, b"k2", None, 700, hdrs(2, None, "0", "shipping")),  # tombstone wins: k2 deleted
    (0, b"k3", b"k3-none", 800, hdrs(None, T2, "00000000000000b1", "orders")),
    (0, b"k3", b"k3-v0", 900, hdrs(0, None, "0", "orders")),  # a version beats none
    (
        1,
        b"k4",
        b"k4-two-tp",
        950,
        [
            *hdrs(7, T2, "00000000000000b2", "x"),
            ("traceparent", b"00-" + T2.encode() + b"-00000000000000b3-01"),
        ],
    ),
]
WINNERS = {b"k1": RECORDS[0], b"k3": RECORDS[5], b"k4": RECORDS[6]}


def produce(bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    errors: list[object] = []
    for partition, key, value, ms, headers in RECORDS:
        producer.produce(
            topic,
            value,
            key,
            partition=partition,
            timestamp=BASE_MS + ms,
            headers=headers,
            on_delivery=lambda err, _msg: errors.append(err) if err else None,
        )
    assert producer.flush(30) == 0
    assert not errors


def read_back(
    bootstrap: str, topic: str, expected: int
) -> dict[bytes, tuple[bytes | None, list[tuple[str, bytes | None]]]]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "pipeline-test", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    out = {}
    try:
        for _ in range(60):
            for m in consumer.consume(100, timeout=0.5):
                if m.error() is None:
                    out[m.key()] = (m.value(), m.headers() or [])
            if len(out) >= expected:
                break
    finally:
        consumer.close()
    return out


def test_pipeline_writes_header_strategy_winners_and_reports_traces(
    spark: SparkSession,
    bootstrap: str,
    topic_factory: Callable[..., str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source, output = topic_factory(partitions=2), topic_factory(partitions=1)
    produce(bootstrap, source)
    parquet = str(tmp_path / "state")

    result = run_pipeline(
        spark,
        bootstrap=bootstrap,
        topic=source,
        strategy="header",
        header="version",
        output_topic=output,
        parquet=parquet,
    )

    assert (result.input_records, result.keys, result.state_records, result.deleted_keys) == (
        len(RECORDS),
        4,
        3,
        1,
    )
    written = read_back(bootstrap, output, len(WINNERS))
    assert written == {k: (r[2], r[4]) for k, r in WINNERS.items()}
    stored = {
        bytes(r["key"]): (r["partition"], bytes(r["value"]))
        for r in spark.read.parquet(parquet).collect()
    }
    assert stored == {k: (r[0], r[2]) for k, r in WINNERS.items()}

    # T1: three hops (orders -> billing -> shipping); T2: one valid hop (k4 has two
    # traceparents, k2's tombstone and k3's second record carry none).
    by_id = {t.trace_id: t for t in result.traces}
    assert set(by_id) == {T1, T2}
    assert (by_id[T1].hops, by_id[T1].client_ids) == (3, ("orders", "billing", "shipping"))
    assert by_id[T1].hop_latencies_ms == (250, 350)
    assert (by_id[T1].first_ms, by_id[T1].latency_ms) == (BASE_MS, 600)
    assert (by_id[T2].hops, by_id[T2].client_ids, by_id[T2].hop_latencies_ms) == (
        1,
        ("orders",),
        (),
    )

    # The command line: same run, report only, kafka.* options, progress on stderr, the
    # trace lines capped; a bad strategy exits 2 naming it.
    argv = ["--bootstrap", bootstrap, "--topic", source, "--strategy", "timestamp"]
    assert main([*argv, "-o", "kafka.client.id=pipeline-test", "--max-traces", "1"]) == 0
    printed = capsys.readouterr()
    assert f"{T1}  hops=3  clients=orders,billing,shipping  latency=600 ms" in printed.out
    assert T2 not in printed.out
    assert "traces: 2 (showing the first 1)" in printed.out
    assert (
        "records read: 7 (0 without key), keys: 4, state: 3, deleted (tombstone winners): 1"
        in printed.out
    )
    for step in ("starting Spark", "reading", "compacting by the timestamp strategy", "done"):
        assert step in printed.err
    assert main([*argv[:4], "--strategy", "newest"]) == 2
    assert "newest" in capsys.readouterr().err
