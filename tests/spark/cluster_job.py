"""The data source on a real (local-cluster) Spark: run by tests/spark/test_cluster.py.

``python tests/spark/cluster_job.py BOOTSTRAP WORKDIR``: executors in their own JVMs
(``local-cluster[2,1,1024]``) batch-read, write, compact and stream with a restart from the
checkpoint; then workers pointed at an interpreter without confluent-kafka must be refused
by the worker check. Prints one JSON line of findings. A separate process because one
Python process holds one SparkContext.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from pyspark.sql import DataFrame, SparkSession

from kheaders.broker import create_topic
from kheaders.spark import (
    WorkerSetupError,
    compact,
    kafka_writer,
    prepare_local_spark,
    read_kafka,
    register,
)
from kheaders.spark._cluster import _CHECKED, check_workers
from kheaders.wire import write_varlong

BAD_PYTHON = "/usr/bin/python3"  # a system interpreter without confluent-kafka
RECORDS = 200  # first round, over 2 partitions
KEYS = 37


def _headers(i: int, n: bytes) -> list[tuple[str, bytes]]:
    """Record ``i``'s headers: an 8-byte version, its number, a zigzag varlong ``-i``."""
    return [("version", (i % 1000).to_bytes(8, "big")), ("n", n), ("vl", write_varlong(-i))]


def _produce(bootstrap: str, topic: str, first: int, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    for i in range(first, first + count):
        headers = _headers(i, str(i).encode())
        producer.produce(topic, str(i).encode(), f"k{i % KEYS}".encode(), headers=headers)
    assert producer.flush(30) == 0


def _consume(bootstrap: str, topic: str, partitions: int, expected: int) -> list[tuple]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "cluster-job", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[tuple] = []
    for _ in range(120):
        for m in consumer.consume(1000, timeout=0.5):
            if m.error() is None:
                out.append((m.key(), m.value(), m.headers()))
        if len(out) >= expected:
            break
    consumer.close()
    return out


def _session(master: str, python: str) -> SparkSession:
    prepare_local_spark(master)
    session = (
        SparkSession.builder.master(master)
        .appName("kheaders-cluster-test")
        .config("spark.pyspark.python", python)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.executor.memory", "512m")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def _executors(sc: object, wait_s: float = 60.0) -> int:
    """Executor JVMs registered with the driver (waits for both to register)."""
    deadline = time.monotonic() + wait_s
    while True:
        count = int(sc._jsc.sc().getExecutorMemoryStatus().size()) - 1  # type: ignore[attr-defined]
        if count >= 2 or time.monotonic() > deadline:
            return count
        time.sleep(0.2)


def _stream_once(spark: SparkSession, bootstrap: str, topic: str, work: Path) -> list[bytes]:
    """One availableNow run from the checkpoint; the values it delivered."""
    seen: list[bytes] = []

    def collect(batch: DataFrame, _batch_id: int) -> None:
        seen.extend(bytes(r.value) for r in batch.select("value").collect())

    stream = read_kafka(
        spark,
        streaming=True,
        **{
            "kafka.bootstrap.servers": bootstrap,
            "subscribe": topic,
            "startingOffsets": "earliest",
        },
    ).load()
    query = (
        stream.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(work / "stream-chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(240)
    assert query.exception() is None, query.exception()
    return seen


def cluster(bootstrap: str, work: Path) -> dict[str, object]:
    began = time.monotonic()
    laps: dict[str, float] = {}

    def lap(name: str) -> None:
        laps[name] = round(time.monotonic() - began, 1)

    spark = _session("local-cluster[2,1,1024]", sys.executable)
    found: dict[str, object] = {"seconds": laps}
    try:
        sc = spark.sparkContext
        found["executor_jvms"] = _executors(sc)
        lap("start")
        register(spark)  # checks the workers once
        source, copy = f"cluster-src-{uuid.uuid4().hex[:8]}", f"cluster-copy-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, source, partitions=2)
        create_topic(bootstrap, copy, partitions=2)
        _produce(bootstrap, source, 0, RECORDS)

        # batch read: every record once, headers byte for byte
        df: DataFrame = read_kafka(
            spark,
            **{
                "kafka.bootstrap.servers": bootstrap,
                "subscribe": source,
                "includeHeaders": "true",
                "maxRecordsPerPartition": "60",
            },
        ).load()
        rows = df.collect()
        found["read"] = len(rows)
        found["read_tasks"] = df.rdd.getNumPartitions()
        found["read_exact"] = all(
            [(h.key, bytes(h.value)) for h in r.headers] == _headers(int(r.value), bytes(r.value))
            and bytes(r.key) == f"k{int(r.value) % KEYS}".encode()
            for r in rows
        )
        found["read_distinct"] = len({bytes(r.value) for r in rows})
        lap("read")

        # write: a copy with headers, nothing lost or duplicated
        kafka_writer(df.select("key", "value", "headers")).option(
            "kafka.bootstrap.servers", bootstrap
        ).option("topic", copy).save()
        copied = _consume(bootstrap, copy, 2, RECORDS)
        found["written"] = len(copied)
        found["written_distinct"] = len({v for _, v, _ in copied})
        found["written_headers_ok"] = all(h == _headers(int(v), v) for _, v, h in copied)

        # compact: the highest version per key (versions are i % 1000, i < 1000: the last i)
        winners = compact(df, "header", "version").select("key", "value").collect()
        expected = {
            f"k{k}".encode(): max(i for i in range(RECORDS) if i % KEYS == k) for k in range(KEYS)
        }
        found["compact_ok"] = {bytes(r.key): int(r.value) for r in winners} == expected
        # ... and by the varlong "vl" = -i, decoded on the executors: the FIRST record wins
        winners = compact(df, "header", "vl", "varlong").select("key", "value").collect()
        first_of = {f"k{k}".encode(): k for k in range(KEYS)}
        found["compact_varlong_ok"] = {bytes(r.key): int(r.value) for r in winners} == first_of
        lap("compact")

        # streaming: a run, more records, a restart from the checkpoint: each record once
        first = _stream_once(spark, bootstrap, source, work)
        _produce(bootstrap, source, RECORDS, RECORDS // 2)
        second = _stream_once(spark, bootstrap, source, work)
        found["streamed"] = [len(first), len(second), len(set(first + second))]
        lap("stream")
        if Path(BAD_PYTHON).exists():
            found["refused"] = refused_workers(spark, BAD_PYTHON)
            lap("refused")
    finally:
        spark.stop()
    return found


def refused_workers(spark: SparkSession, python: str) -> str | None:
    """check_workers' answer when the workers run ``python`` (no confluent-kafka there)."""
    sc = spark.sparkContext
    kept = sc.pythonExec
    sc.pythonExec = python  # the interpreter PythonFunctions name for their workers
    _CHECKED.clear()
    try:
        check_workers(spark)
    except WorkerSetupError as exc:
        return str(exc)
    finally:
        sc.pythonExec = kept
    return None


if __name__ == "__main__":
    bootstrap_servers, workdir = sys.argv[1], Path(sys.argv[2])
    print("RESULT " + json.dumps(cluster(bootstrap_servers, workdir)))
