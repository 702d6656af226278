"""KIP-280 compaction in Spark SQL vs a plain ``max_by(offset)`` de-duplication.

Run ``python -m bench.spark_compact [--rows 5000000]``: builds one cached DataFrame in the
kheaders source schema (``--keys`` keys over ``--partitions`` Kafka partitions, each record
with ``client.id``, ``traceparent`` and, for 9 in 10 records, an 8-byte ``version`` header),
then times, best of ``--repeats``, into Spark's ``noop`` sink:

- ``plain``: ``groupBy(key).agg(max_by(struct(all columns), offset))`` (the baseline);
- ``header``: ``kheaders.spark.compact(df, "header", "version")`` (one shuffle, two aggregations);
- ``header-varlong``: the same reading versions as varlongs (most do not decode here);
- ``header-slots``: the same with ``partitions=`` (one aggregation of partition slots);
- ``header-single``: the same with ``keys_in_one_partition=True`` (one aggregation by key, as
  for topics written with Kafka's default partitioner; a key in two partitions would fail);
- ``offset``: ``compact(df, "offset")``.

Prints the ratios to ``plain`` (target: <= 1.3 for ``header-single``; ``header`` is the exact
rule for keys that may span partitions) and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from kheaders.spark import compact, prepare_local_spark

ROOT = Path(__file__).resolve().parents[1]
BASE_MS = 1_700_000_000_000


def records(spark: SparkSession, rows: int, keys: int, partitions: int) -> DataFrame:
    """``rows`` records in the source schema; a key always lands in the same partition."""
    key_id = sf.col("id") % keys
    version = (sf.col("id") * 7919) % 1000
    header = "struct<key:string,value:binary>"
    version_header = sf.struct(
        sf.lit("version").alias("key"), sf.unhex(sf.lpad(sf.hex(version), 16, "0")).alias("value")
    )
    trace = sf.lpad(sf.hex(sf.col("id") % 100_000 + 1), 32, "0")
    traceparent = sf.struct(
        sf.lit("traceparent").alias("key"),
        sf.concat(sf.lit("00-"), sf.lower(trace), sf.lit("-00f067aa0ba902b7-01"))
        .cast("binary")
        .alias("value"),
    )
    client = sf.struct(sf.lit("client.id").alias("key"), sf.lit(b"bench").alias("value"))
    headers = sf.when(
        sf.col("id") % 10 == 0, sf.array(client, traceparent).cast(f"array<{header}>")
    ).otherwise(sf.array(client, version_header, traceparent).cast(f"array<{header}>"))
    return spark.range(rows).select(
        sf.concat(sf.lit("key-"), key_id.cast("string")).cast("binary").alias("key"),
        sf.concat(sf.lit("value-"), sf.col("id").cast("string")).cast("binary").alias("value"),
        sf.lit("bench").alias("topic"),
        (key_id % partitions).cast("int").alias("partition"),
        sf.col("id").alias("offset"),
        sf.timestamp_millis(sf.lit(BASE_MS) + sf.col("id")).alias("timestamp"),
        sf.lit(0).alias("timestampType"),
        headers.alias("headers"),
    )


def timed(run: Callable[[], DataFrame]) -> float:
    start = time.perf_counter()
    run().write.format("noop").mode("overwrite").save()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the timings and ratios; write the JSON results."""
    parser = argparse.ArgumentParser(prog="python -m bench.spark_compact")
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument(
        "--json", type=Path, default=ROOT / "bench" / "results" / "spark_compact.json"
    )
    args = parser.parse_args(argv)
    prepare_local_spark(args.master)
    spark = (
        SparkSession.builder.master(args.master)
        .appName("kheaders-bench-compact")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.driver.memory", "3g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    df = records(spark, args.rows, args.keys, args.partitions).cache()
    assert df.count() == args.rows
    every = [sf.col(c) for c in df.columns]
    runs: dict[str, Callable[[], DataFrame]] = {
        "plain": lambda: df.groupBy("key").agg(sf.max_by(sf.struct(*every), "offset").alias("w")),
        "header": lambda: compact(df, "header", "version"),
        "header-varlong": lambda: compact(df, "header", "version", "varlong"),
        "header-slots": lambda: compact(df, "header", "version", partitions=args.partitions),
        "header-single": lambda: compact(df, "header", "version", keys_in_one_partition=True),
        "offset": lambda: compact(df, "offset"),
    }
    for run in runs.values():  # warm up: code generation, JIT
        timed(run)
    best = {name: float("inf") for name in runs}
    for _ in range(args.repeats):
        for name, run in runs.items():
            best[name] = min(best[name], timed(run))
    ratios = {name: best[name] / best["plain"] for name in runs}
    results = {
        "benchmark": "spark_compact",
        "rows": args.rows,
        "keys": args.keys,
        "partitions": args.partitions,
        "master": args.master,
        "repeats": args.repeats,
        "python": platform.python_version(),
        "spark": spark.version,
        "seconds": best,
        "ratio_to_plain": ratios,
        "target_header_single_ratio": 1.3,
    }
    print(f"{args.rows} rows, {args.keys} keys, {args.partitions} partitions, {args.master}")
    for name in runs:
        print(f"  {name:<13} {best[name]:7.2f} s   x{ratios[name]:.2f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.json}")
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
