"""The mirror as a Spark job: the same routing table and provenance, in Spark SQL.

Read with headers from the source through the ``kheaders`` data source, decide hops, loops,
routes and provenance with SQL expressions (no Python per row: this module only writes the
SQL text), write to the target; rows whose hops header is refused go to the dead-letter topic
on the source with the reason. Batch (everything now) or streaming (with a checkpoint, each
micro-batch through ``foreachBatch``: Python runs once per micro-batch on the driver).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kheaders.deadletter import DeadLetter
from kheaders.mirror._provenance import (
    HOPS,
    MAX_HOPS,
    MAX_HOPS_BYTES,
    ORIGIN_CLUSTER,
    ORIGIN_OFFSET,
    ORIGIN_PARTITION,
    ORIGIN_TOPIC,
    check_cluster_id,
)
from kheaders.mirror._routes import SAME_TOPIC, RoutingTable, _Compiled, _Test
from kheaders.mirror._setup import metadata, plan

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

_H = "coalesce(headers, CAST(array() AS ARRAY<STRUCT<key: STRING, value: BINARY>>))"
_ID = "[A-Za-z0-9._-]{1,64}"


def _text(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _last(key: str) -> str:
    return f"try_element_at(filter({_H}, x -> x.key = {_text(key)}), -1).value"


def _test_sql(test: _Test) -> str:
    present = f"exists({_H}, x -> x.key = {_text(test.key)})"
    if test.kind == "present":
        return present
    if test.kind == "absent":
        return f"NOT {present}"
    values = ", ".join(f"X'{v.hex()}'" for v in sorted(test.values))
    return f"({present} AND coalesce({_last(test.key)} IN ({values}), false))"


def _targets_sql(rule: _Compiled) -> str:
    names = [f"replace({_text(t)}, {_text(SAME_TOPIC)}, topic)" for t in rule.targets]
    return f"CAST(array({', '.join(names)}) AS ARRAY<STRING>)"


def routing_sql(table: RoutingTable) -> str:
    """A SQL expression: the array of target topics of a row (empty: drop)."""
    whens = []
    for rule in table.rules:
        tests = [_test_sql(t) for t in rule.tests]
        if rule.topics is not None:
            tests.insert(0, f"topic IN ({', '.join(_text(t) for t in sorted(rule.topics))})")
        whens.append(f"WHEN {' AND '.join(tests) or 'true'} THEN {_targets_sql(rule)}")
    return f"CASE {' '.join(whens)} ELSE {_targets_sql(table.default_rule)} END"


def _hops_columns(source_id: str, target_id: str) -> dict[str, str]:
    hops = f"filter({_H}, x -> x.key = '{HOPS}')"
    text = f"CAST({hops}[0].value AS STRING)"
    path = (
        f"CASE WHEN size({hops}) = 0 THEN '{source_id},{target_id}'"
        f" WHEN element_at(split({text}, ','), -1) = '{source_id}'"
        f" THEN concat({text}, ',{target_id}')"
        f" ELSE concat({text}, ',{source_id},{target_id}') END"
    )
    problem = (
        f"CASE WHEN size({hops}) = 0 THEN NULL"
        f" WHEN size({hops}) > 1 THEN concat(size({hops}), ' {HOPS} headers (one expected)')"
        f" WHEN {hops}[0].value IS NULL THEN '{HOPS} header has a null value'"
        f" WHEN octet_length({hops}[0].value) > {MAX_HOPS_BYTES}"
        f" THEN '{HOPS} header is over {MAX_HOPS_BYTES} bytes'"
        f" WHEN NOT coalesce({text} RLIKE '^{_ID}(,{_ID})*$', false)"
        f" THEN '{HOPS} header: a hop is not a cluster id'"
        f" WHEN array_contains(split({text}, ','), '{target_id}') THEN NULL"
        f" WHEN size(split(path, ',')) > {MAX_HOPS} THEN '{HOPS}: the hops would exceed {MAX_HOPS}'"
        " END"
    )
    looped = (
        f"size({hops}) = 1 AND coalesce(array_contains(split({text}, ','), '{target_id}'), false)"
    )
    new_headers = (
        f"CASE WHEN size({hops}) = 1 THEN transform({_H}, x -> IF(x.key = '{HOPS}',"
        f" named_struct('key', x.key, 'value', CAST(path AS BINARY)), x))"
        f" WHEN exists({_H}, x -> x.key = '{ORIGIN_CLUSTER}')"
        f" THEN concat({_H}, array(named_struct('key', '{HOPS}', 'value', CAST(path AS BINARY))))"
        f" ELSE concat({_H}, array("
        f"named_struct('key', '{ORIGIN_CLUSTER}', 'value', CAST('{source_id}' AS BINARY)),"
        f" named_struct('key', '{ORIGIN_TOPIC}', 'value', CAST(topic AS BINARY)),"
        f" named_struct('key', '{ORIGIN_PARTITION}',"
        " 'value', CAST(CAST(partition AS STRING) AS BINARY)),"
        f" named_struct('key', '{ORIGIN_OFFSET}', 'value', CAST(CAST(offset AS STRING) AS BINARY)),"
        f" named_struct('key', '{HOPS}', 'value', CAST(path AS BINARY)))) END"
    )
    return {"path": path, "problem": problem, "looped": looped, "out_headers": new_headers}


def mirror_frame(
    df: DataFrame,
    table: RoutingTable,
    source_id: str,
    target_id: str,
    target_partitions: dict[str, int],
) -> tuple[DataFrame, DataFrame]:
    """The rows to write to the target (``key, value, topic, partition, headers, timestamp``)
    and the refused rows for the dead-letter topic (with ``reason``), from a source frame."""
    check_cluster_id(source_id, "source")
    check_cluster_id(target_id, "target")
    cols = _hops_columns(source_id, target_id)
    parts = ", ".join(f"{_text(t)}, {n}" for t, n in sorted(target_partitions.items())) or "'', 0"
    staged = df.selectExpr("*", f"{cols['path']} AS path").selectExpr(
        "*", f"{cols['problem']} AS reason", f"{cols['looped']} AS looped"
    )
    out = (
        staged.where("reason IS NULL AND NOT looped")
        .selectExpr(
            "*", f"{routing_sql(table)} AS targets", f"{cols['out_headers']} AS out_headers"
        )
        .selectExpr("*", "explode(targets) AS target")
        .selectExpr(
            "key",
            "value",
            "target AS topic",
            f"CASE WHEN partition < coalesce(try_element_at(map({parts}), target), 0)"
            " THEN partition END AS partition",
            "out_headers AS headers",
            "timestamp",
        )
    )
    refused = staged.where("reason IS NOT NULL")
    return out, refused


def _dead_letters(refused: DataFrame) -> DataFrame:
    reason = "'kheaders._errors.UnmirrorableRecordError'"
    return refused.selectExpr(
        "key",
        "value",
        "concat(topic, '-dlt') AS topic",
        f"concat({_H}, array("
        "named_struct('key', 'kheaders.dlt.original.topic', 'value', CAST(topic AS BINARY)),"
        " named_struct('key', 'kheaders.dlt.original.partition',"
        " 'value', CAST(CAST(partition AS STRING) AS BINARY)),"
        " named_struct('key', 'kheaders.dlt.original.offset',"
        " 'value', CAST(CAST(offset AS STRING) AS BINARY)),"
        f" named_struct('key', 'kheaders.dlt.error.type', 'value', CAST({reason} AS BINARY)),"
        " named_struct('key', 'kheaders.dlt.error.message', 'value', CAST(reason AS BINARY))"
        ")) AS headers",
    )


def mirror_with_spark(
    spark: SparkSession,
    source: str,
    target: str,
    topics: Sequence[str],
    table: RoutingTable | None = None,
    *,
    source_name: str | None = None,
    target_name: str | None = None,
    checkpoint: str | None = None,
) -> StreamingQuery | None:
    """Mirror ``topics`` from ``source`` to ``target`` (bootstrap servers) with Spark.

    Without ``checkpoint``: one batch of everything in the topics now; returns None. With it:
    a streaming query (``availableNow``: what is there when it starts, then it stops; run it
    again to continue from the checkpoint); returns the started query. Refused hops go to
    ``{topic}-dlt`` on the source. Raises what :meth:`Mirror.check` raises, at start.
    """
    from kheaders.spark import kafka_writer, read_kafka, register

    table = table or RoutingTable()
    found = plan(
        {"bootstrap.servers": source},
        {"bootstrap.servers": target},
        list(topics),
        table,
        source_name=source_name,
        target_name=target_name,
        dead_letter=DeadLetter(),
    )
    register(spark)
    options = {
        "kafka.bootstrap.servers": source,
        "subscribe": ",".join(found.source_topics),
        "includeHeaders": "true",
        "startingOffsets": "earliest",
    }

    def write(batch: DataFrame, _batch_id: int = 0) -> None:
        batch = batch.persist()  # written twice: to the target and to the dead-letter topics
        try:
            out, refused = mirror_frame(
                batch, table, found.source_id, found.target_id, found.target_partitions
            )
            kafka_writer(out).option("kafka.bootstrap.servers", target).save()
            kafka_writer(_dead_letters(refused)).option("kafka.bootstrap.servers", source).save()
        finally:
            batch.unpersist()

    if checkpoint is None:
        write(read_kafka(spark, streaming=False, **options).load())
        return None
    stream = read_kafka(spark, streaming=True, **options).load()
    writer: Any = stream.writeStream.foreachBatch(write)
    return writer.option("checkpointLocation", checkpoint).trigger(availableNow=True).start()  # type: ignore[no-any-return]


__all__ = ["metadata", "mirror_frame", "mirror_with_spark", "routing_sql"]
