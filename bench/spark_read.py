"""Read throughput: the ``kheaders`` Spark data source vs a bare confluent-kafka consumer.

Run ``python -m bench.spark_read [--records 200000]``: produces the records once (3 headers,
100-byte values) on a real broker (KHEADERS_BOOTSTRAP, Docker, else embedded Tansu), then
times each reader over the same topic, best of ``--repeats``; prints a table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from kheaders.broker import create_topic, running_broker

ROOT = Path(__file__).resolve().parents[1]


def produce(bootstrap: str, topic: str, records: int, partitions: int, value_bytes: int) -> None:
    """Produce ``records`` records with 3 headers each, round-robin over the partitions."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000}
    )
    value = os.urandom(value_bytes)
    for i in range(records):
        headers: list[tuple[str, str | bytes | None]] = [
            ("trace", b"%032x" % i),
            ("source", b"bench"),
            ("seq", str(i).encode()),
        ]
        while True:
            try:
                producer.produce(
                    topic, value, b"k%d" % i, partition=i % partitions, headers=headers
                )
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0


def bare_consumer(bootstrap: str, topic: str, records: int, partitions: int) -> float:
    """Seconds for one consumer (assign) to read every record, touching what the source keeps."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4()}",
            "enable.auto.commit": False,
        }
    )
    start = time.perf_counter()
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen = 0
    while seen < records:
        for m in consumer.consume(5000, timeout=1.0):
            if m.error() is None:
                m.key(), m.value(), m.headers(), m.timestamp(), m.offset()
                seen += 1
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed


def spark_reads(bootstrap: str, topic: str, records: int) -> dict[str, Callable[[], float]]:
    """Timed Spark actions over the source (session started and warmed up here)."""
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    from pyspark.sql import SparkSession

    from kheaders.spark import prepare_local_spark, register

    prepare_local_spark("local[2]")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)

    def reader(headers: bool):  # type: ignore[no-untyped-def]
        return (
            spark.read.format("kheaders")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("includeHeaders", str(headers).lower())
            .load()
        )

    def timed(action: Callable[[], object]) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            action()
            return time.perf_counter() - start

        return run

    def noop(headers: bool) -> Callable[[], object]:
        return lambda: reader(headers).write.format("noop").mode("overwrite").save()

    def count() -> int:
        n: int = reader(True).count()
        assert n == records, n
        return n

    noop(True)()  # warm up: Python workers, JIT, connections
    return {
        "spark noop write, headers": timed(noop(True)),
        "spark noop write, no headers": timed(noop(False)),
        "spark count, headers": timed(count),
    }


def measure(records: int, partitions: int, value_bytes: int, repeats: int) -> dict[str, Any]:
    """Produce once, time every reader (best of ``repeats``); the results as a JSON-able dict."""
    with running_broker() as broker:
        topic = create_topic(
            broker.bootstrap, f"bench-spark-{uuid.uuid4().hex[:8]}", partitions=partitions
        )
        produce(broker.bootstrap, topic, records, partitions, value_bytes)
        runs: dict[str, Callable[[], float]] = {
            "bare confluent consumer": lambda: bare_consumer(
                broker.bootstrap, topic, records, partitions
            )
        }
        runs |= spark_reads(broker.bootstrap, topic, records)
        best = {name: min(run() for _ in range(repeats)) for name, run in runs.items()}
        kind = broker.kind
    base = records / best["bare confluent consumer"]
    return {
        "records": records,
        "partitions": partitions,
        "value_bytes": value_bytes,
        "headers_per_record": 3,
        "broker": kind,
        "spark_master": "local[2]",
        "readers": {
            name: {"seconds": s, "records_per_s": records / s, "ratio": records / s / base}
            for name, s in best.items()
        },
    }


def run(quick: bool = False) -> dict[str, Any]:
    """Entry point of ``python -m bench`` (its spark group): 200k records, or 20k when quick."""
    return measure(20_000 if quick else 200_000, 2, 100, 2 if quick else 3)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print a table and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "spark_read.json")
    args = parser.parse_args(argv)
    results = measure(args.records, args.partitions, args.value_bytes, args.repeats)
    print(
        f"{args.records} records, {args.partitions} partitions, 3 headers, "
        f"{args.value_bytes}-byte values, broker: {results['broker']}"
    )
    print(f"{'reader':32} {'seconds':>8} {'records/s':>11} {'ratio':>6}")
    for name, row in results["readers"].items():
        print(f"{name:32} {row['seconds']:8.2f} {row['records_per_s']:11,.0f} {row['ratio']:6.2f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
