"""The pipeline job: read a topic, compact it by KIP-280, write the state, report the traces.

Everything after the read is Spark SQL (no Python UDF): :func:`kheaders.spark.compact` for
the state and the header column functions for the trace report. ``run_pipeline`` is the
API (the ``kheaders pipeline`` command and the demo call it); ``main`` is the command line
of ``python -m kheaders.spark.pipeline`` and ``spark-submit kheaders/spark/pipeline.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from kheaders.spark._compact import compact
from kheaders.spark._functions import header_text, trace_id

CLIENT_ID_HEADER = "client.id"
MAX_TRACES = 20
"""Traces a run brings to the driver by default (the report's first ones by time)."""


@dataclass(frozen=True, slots=True)
class TraceRow:
    """One trace of the report: its records (hops) in time order and who produced them."""

    trace_id: str
    hops: int
    client_ids: tuple[str, ...]
    first_ms: int
    last_ms: int
    hop_latencies_ms: tuple[int, ...]

    @property
    def latency_ms(self) -> int:
        """Time from the first hop to the last (record timestamps)."""
        return self.last_ms - self.first_ms


@dataclass(frozen=True, slots=True)
class PipelineResult:
    """What a run did: record and key counts, where the state went, the trace report."""

    input_records: int
    keyless_records: int
    keys: int
    state_records: int
    deleted_keys: int
    output_topic: str | None
    parquet: str | None
    traces: tuple[TraceRow, ...]
    trace_count: int = 0
    """How many traces the records hold; ``traces`` has at most ``max_traces`` of them."""


def trace_report(records: DataFrame) -> DataFrame:
    """Per trace id (from ``traceparent``): hops, client ids, first/last ms, hop latencies.

    Records without a valid single ``traceparent`` are left out. Hops are ordered by
    timestamp, then partition and offset; ``client_ids`` are the distinct ``client.id``
    header texts in hop order; ``hop_latencies_ms`` the timestamp gaps between hops.
    """
    hop = sf.struct(
        sf.unix_millis(sf.col("timestamp").cast("timestamp")).alias("ms"),
        sf.col("partition").alias("p"),
        sf.col("offset").alias("o"),
        header_text("headers", CLIENT_ID_HEADER).alias("client"),
    )
    traced = records.select(trace_id("headers").alias("trace_id"), hop.alias("hop"))
    grouped = (
        traced.where(sf.col("trace_id").isNotNull())
        .groupBy("trace_id")
        .agg(sf.array_sort(sf.collect_list("hop")).alias("h"))
    )
    h = sf.col("h")
    n = sf.size(h)
    return grouped.select(
        "trace_id",
        n.alias("hops"),
        sf.array_distinct(
            sf.filter(sf.transform(h, lambda x: x["client"]), lambda c: c.isNotNull())
        ).alias("client_ids"),
        h[0]["ms"].alias("first_ms"),
        sf.element_at(h, -1)["ms"].alias("last_ms"),
        sf.zip_with(
            sf.slice(h, 2, n - 1), sf.slice(h, 1, n - 1), lambda a, b: a["ms"] - b["ms"]
        ).alias("hop_latencies_ms"),
    ).orderBy("first_ms", "trace_id")


def read_topic(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    *,
    starting_offsets: str = "earliest",
    ending_offsets: str = "latest",
    kafka_options: Mapping[str, str] | None = None,
) -> DataFrame:
    """A batch DataFrame of ``topic`` (headers included) through the ``kheaders`` source."""
    from kheaders.spark._source import register  # the data source (pyarrow) only when used

    register(spark)
    reader = (
        spark.read.format("kheaders")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", starting_offsets)
        .option("endingOffsets", ending_offsets)
        .option("includeHeaders", "true")
    )
    for name, value in (kafka_options or {}).items():
        reader = reader.option(f"kafka.{name}", value)
    return reader.load()


def run_pipeline(
    spark: SparkSession,
    *,
    bootstrap: str,
    topic: str,
    strategy: str = "offset",
    header: str | None = None,
    encoding: str = "long",
    starting_offsets: str = "earliest",
    ending_offsets: str = "latest",
    output_topic: str | None = None,
    parquet: str | None = None,
    kafka_options: Mapping[str, str] | None = None,
    max_traces: int | None = MAX_TRACES,
    keys_in_one_partition: bool = False,
    progress: Callable[[str], None] | None = None,
) -> PipelineResult:
    """Read ``topic``, compact it by ``strategy``, write the state, return counts and traces.

    The state (the winner of every key, tombstone winners removed) goes to ``output_topic``
    (key, value and the winner's headers; partitioned by key like Java's producer) and/or
    to a Parquet directory ``parquet`` (all source columns, overwritten). ``kafka_options``
    are librdkafka settings (security, ...) without the ``kafka.`` prefix, for the read and
    the write. Only the first ``max_traces`` traces (``None``: all) come to the driver;
    ``trace_count`` tells how many there are. ``progress`` is called with a line per step.
    ``keys_in_one_partition`` picks compact()'s single-stage plan.

    Raises ConfigurationError for bad compaction settings; Spark and delivery errors
    propagate (the write fails rather than losing a record).
    """
    started = time.monotonic()

    def step(text: str) -> None:
        if progress is not None:
            progress(f"[{time.monotonic() - started:6.1f}s] {text}")

    step(f"reading {topic} ({starting_offsets} .. {ending_offsets})")
    records = read_topic(
        spark,
        bootstrap,
        topic,
        starting_offsets=starting_offsets,
        ending_offsets=ending_offsets,
        kafka_options=kafka_options,
    )
    records = records.persist()
    try:
        input_records = records.count()
        step(f"read {input_records} records; compacting by the {strategy} strategy")
        latest = compact(
            records,
            strategy,
            header,
            encoding,
            keep_tombstones=True,
            keys_in_one_partition=keys_in_one_partition,
        ).persist()
        state = latest.where(sf.col("value").isNotNull())
        if output_topic is not None:
            step(f"writing the state to topic {output_topic}")
            writer = state.select("key", "value", "headers").write.format("kheaders")
            for name, value in (kafka_options or {}).items():
                writer = writer.option(f"kafka.{name}", value)
            writer.option("kafka.bootstrap.servers", bootstrap).option("topic", output_topic).mode(
                "append"
            ).save()
        if parquet is not None:
            step(f"writing the state to parquet {parquet}")
            state.write.mode("overwrite").parquet(parquet)
        step("counting keys and building the trace report")
        counts = latest.agg(
            sf.count(sf.lit(1)).alias("keys"),
            sf.count("value").alias("state"),
        ).first()
        report = trace_report(records).persist()
        trace_count = report.count()
        shown = report if max_traces is None else report.limit(max_traces)
        traces = tuple(
            TraceRow(
                r["trace_id"],
                r["hops"],
                tuple(r["client_ids"]),
                r["first_ms"],
                r["last_ms"],
                tuple(r["hop_latencies_ms"]),
            )
            for r in shown.collect()
        )
        report.unpersist()
        latest.unpersist()
        keys = int(counts["keys"]) if counts else 0
        state_records = int(counts["state"]) if counts else 0
        step("done")
        return PipelineResult(
            input_records=input_records,
            keyless_records=records.where(sf.col("key").isNull()).count(),
            keys=keys,
            state_records=state_records,
            deleted_keys=keys - state_records,
            output_topic=output_topic,
            parquet=parquet,
            traces=traces,
            trace_count=trace_count,
        )
    finally:
        records.unpersist()


def format_report(result: PipelineResult) -> str:
    """The run's summary and trace report as text (what ``main`` prints)."""
    lines = [
        f"records read: {result.input_records} ({result.keyless_records} without key),"
        f" keys: {result.keys},"
        f" state: {result.state_records}, deleted (tombstone winners): {result.deleted_keys}",
    ]
    if result.output_topic:
        lines.append(f"state written to topic {result.output_topic}")
    if result.parquet:
        lines.append(f"state written to parquet {result.parquet}")
    shown = len(result.traces)
    more = f" (showing the first {shown})" if shown < result.trace_count else ""
    lines.append(f"traces: {result.trace_count}{more}")
    for t in result.traces:
        gaps = ", ".join(f"{g} ms" for g in t.hop_latencies_ms) or "-"
        lines.append(
            f"  {t.trace_id}  hops={t.hops}  clients={','.join(t.client_ids) or '-'}"
            f"  latency={t.latency_ms} ms  between hops: {gaps}"
        )
    return "\n".join(lines)
