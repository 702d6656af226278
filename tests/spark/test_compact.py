"""KIP-280 compaction in Spark SQL gives the shared rule table's states, natively, streaming too."""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from kheaders import ConfigurationError
from kheaders.spark import compact
from tests.spark.codegen import HUGE_METHOD_BYTES, max_method_sizes
from tests.support.compaction_cases import Case, CaseRecord, load_cases

SOURCE_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, ts_ms bigint,"
    " timestampType int, headers array<struct<key:string,value:binary>>"
)
CASES = load_cases()


def records_frame(spark: SparkSession, records: list[CaseRecord], topic: str = "t") -> DataFrame:
    """The records as the kheaders source gives them (its schema, column for column)."""
    rows = [
        (r.key, r.value, topic, r.partition, r.offset, r.timestamp, 0, r.headers) for r in records
    ]
    df = spark.createDataFrame(rows, SOURCE_SCHEMA)
    return df.select(
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        sf.timestamp_millis("ts_ms").alias("timestamp"),
        "timestampType",
        "headers",
    )


def assert_native(df: DataFrame) -> None:
    plan = df._jdf.queryExecution().toString()
    for python_node in ("PythonUDF", "BatchEvalPython", "ArrowEvalPython"):
        assert python_node not in plan


def states(
    spark: SparkSession, plan: str, cases: list[Case] = CASES
) -> dict[str, dict[bytes, tuple[int, int]]]:
    """Every case compacted: case name -> {key: (partition, offset)}.

    Cases with the same settings share one frame (keys prefixed by the case number, so they
    never meet), which keeps the number of Spark jobs small.
    """
    groups: dict[tuple[str, str | None, str], list[int]] = {}
    for i, case in enumerate(cases):
        groups.setdefault((case.strategy, case.header, case.encoding), []).append(i)
    got: dict[str, dict[bytes, tuple[int, int]]] = {c.name: {} for c in cases}
    parts = []
    for (strategy, header, encoding), members in groups.items():
        records = [r._replace(key=b"%d/" % i + r.key) for i in members for r in cases[i].records]
        slots = max(r.partition for r in records) + 1 if plan == "slots" else None
        df = records_frame(spark, records)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # blank header key: the documented fallback
            out = compact(
                df,
                strategy,
                header,
                encoding,
                partitions=slots,
                keys_in_one_partition=plan == "single",
            )
        assert out.columns == df.columns
        parts.append(out.select("key", "partition", "offset"))
    union = functools.reduce(DataFrame.unionByName, parts)
    assert_native(union)
    for row in union.collect():
        case, _, key = bytes(row["key"]).partition(b"/")
        got[cases[int(case)].name][key] = (row["partition"], row["offset"])
    return got


def expected_states(cases: list[Case]) -> dict[str, dict[bytes, tuple[int, int]]]:
    return {c.name: c.expected for c in cases}


@pytest.mark.parametrize("plan", ["two-stage", "slots"])
def test_shared_rule_table_states_match(spark: SparkSession, plan: str) -> None:
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    assert states(spark, plan) == expected_states(CASES)


def _one_partition(case: Case) -> bool:
    seen: dict[bytes | None, set[int]] = {}
    for r in case.records:
        seen.setdefault(r.key, set()).add(r.partition)
    return all(len(parts) == 1 for parts in seen.values())


def test_single_stage_plan_matches_every_case_whose_keys_stay_in_one_partition(
    spark: SparkSession,
) -> None:
    """keys_in_one_partition=True: the same states for those cases; the others fail loudly."""
    single = [c for c in CASES if _one_partition(c)]
    assert 0 < len(single) < len(CASES)  # the table has both kinds
    assert states(spark, "single", single) == expected_states(single)
    spanning = next(c for c in CASES if not _one_partition(c))
    df = records_frame(spark, spanning.records)
    with pytest.raises(Exception, match=r"keys_in_one_partition=True\): key [0-9A-F]+ \(hex\)"):
        compact(df, spanning.strategy, spanning.header, keys_in_one_partition=True).collect()
    with pytest.raises(ConfigurationError, match="not both"):
        compact(df, partitions=2, keys_in_one_partition=True)


def test_winners_keep_every_input_column_and_key_less_records_are_left_out(
    spark: SparkSession,
) -> None:
    case = next(c for c in CASES if c.name == "header_kip_out_of_order_versions_keep_120")
    keyless = CaseRecord(None, b"x", 0, 99, 99_999, [("version", (999).to_bytes(8, "big"))])  # type: ignore[arg-type]
    df = records_frame(spark, [*case.records, keyless])
    df = df.withColumn("note", sf.concat(sf.lit("n"), "offset"))
    out = compact(df, "header", "version").collect()
    assert len(out) == 1
    winner = out[0].asDict()
    source = next(r for r in case.records if (r.partition, r.offset) == case.expected[b"k1"])
    assert winner["note"] == f"n{source.offset}"
    assert bytes(winner["value"]) == source.value
    assert [(h["key"], bytes(h["value"])) for h in winner["headers"]] == source.headers
    assert winner["topic"] == "t"


def test_bad_settings_and_frames_are_rejected_naming_the_fault(spark: SparkSession) -> None:
    df = records_frame(spark, CASES[0].records)
    with pytest.raises(ConfigurationError, match=r"compaction\.strategy"):
        compact(df, "newest")
    with pytest.raises(ConfigurationError, match="varint"):
        compact(df, "header", "version", "varint")
    with pytest.raises(ConfigurationError, match="missing: headers"):
        compact(df.drop("headers"), "header", "version")
    with pytest.raises(ConfigurationError, match="partitions"):
        compact(df, partitions=0)
    with pytest.raises(Exception, match=r"key 6B31 \(hex\) is in partition 3, offset \d+"):
        compact(df.withColumn("partition", sf.lit(3)), partitions=2).collect()


def test_streaming_update_mode_keeps_the_latest_state_across_batches(
    spark: SparkSession, tmp_path: Path
) -> None:
    """compact() on a stream (file source, two batches) in update mode: state carries over."""
    source = tmp_path / "in"
    version = {n: n.to_bytes(8, "big") for n in range(10)}

    def rec(key: bytes, value: bytes | None, offset: int, v: int) -> CaseRecord:
        return CaseRecord(key, value, offset % 2, offset, 1000 + offset, [("version", version[v])])

    first = [rec(b"a", b"a5", 0, 5), rec(b"b", b"b1", 2, 1), rec(b"a", b"a3", 4, 3)]
    second = [rec(b"a", b"a4", 6, 4), rec(b"b", b"b2", 8, 2), rec(b"c", None, 9, 1)]
    records_frame(spark, first).write.parquet(str(source / "1"))
    schema = records_frame(spark, first).schema
    stream = spark.readStream.schema(schema).option("recursiveFileLookup", "true")
    compacted = compact(
        stream.parquet(str(source)), "header", "version", partitions=2, keep_tombstones=True
    )
    assert_native(compacted)
    seen: list[dict[bytes, tuple[bytes | None, int]]] = []

    def sink(batch: DataFrame, _batch_id: int) -> None:
        rows = batch.collect()
        seen.append(
            {bytes(r["key"]): (r["value"] and bytes(r["value"]), r["offset"]) for r in rows}
        )

    query = (
        compacted.writeStream.outputMode("update")
        .foreachBatch(sink)
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    records_frame(spark, second).write.parquet(str(source / "2"))
    query = (
        compacted.writeStream.outputMode("update")
        .foreachBatch(sink)
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    updates = [batch for batch in seen if batch]
    assert updates[0] == {b"a": (b"a5", 0), b"b": (b"b1", 2)}
    # a4 (version 4) loses to a5 (version 5) from the first batch: update mode re-emits the
    # touched key a with its unchanged winner; the tombstone winner of c is emitted as such.
    assert updates[1] == {b"a": (b"a5", 0), b"b": (b"b2", 8), b"c": (None, 9)}


def test_streaming_frame_without_partitions_is_rejected(spark: SparkSession) -> None:
    stream = (
        spark.readStream.format("rate")
        .load()
        .select(
            sf.col("value").cast("string").cast("binary").alias("key"),
            sf.col("value").cast("string").cast("binary").alias("value"),
            sf.lit(0).alias("partition"),
            sf.col("value").alias("offset"),
            sf.col("timestamp"),
        )
    )
    with pytest.raises(ConfigurationError, match="partitions="):
        compact(stream)


@pytest.mark.parametrize("single", [False, True])
def test_batch_plans_read_the_version_header_without_lambdas(
    spark: SparkSession, single: bool
) -> None:
    """Spark interprets lambdas row by row; the header read and the order keys compile."""
    df = records_frame(spark, CASES[0].records)
    out = compact(df, "header", "version", keys_in_one_partition=single)
    plan = out._jdf.queryExecution().executedPlan().toString().lower()
    assert "array_position" in plan  # the header read is in the plan ...
    assert "lambdafunction" not in plan  # ... and nothing in it is a lambda


@pytest.mark.parametrize("plan", ["two-stage", "single", "slots"])
def test_varlong_plans_compile_to_methods_the_jit_compiles(spark: SparkSession, plan: str) -> None:
    """The varlong version decoder keeps every generated method under HotSpot's JIT limit.

    Over it, the stage reading the versions ran interpreted: 2.6x plain's time, not 1.8x.
    """
    case = next(c for c in CASES if c.encoding == "varlong")
    df = records_frame(spark, case.records)
    out = compact(
        df,
        "header",
        "version",
        "varlong",
        partitions=2 if plan == "slots" else None,
        keys_in_one_partition=plan == "single",
    )
    sizes = max_method_sizes(out)
    assert len(sizes) >= 2  # the stage reading the versions, and the aggregation after it
    assert max(sizes) < HUGE_METHOD_BYTES, sizes
