"""The header column functions answer exactly like kheaders.Headers, natively, under ANSI mode."""

from __future__ import annotations

from typing import TypeVar

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from kheaders import DecodeError, Headers
from kheaders._codec.protocol import ValueCodec
from kheaders._model.traceparent import extract_trace_parent
from kheaders.spark import (
    header_last,
    header_long,
    header_text,
    header_values,
    header_varlong,
    headers_to_map,
    parent_span_id,
    register_functions,
    set_header,
    trace_id,
    with_header,
)
from kheaders.spark._sql import FUNCTIONS
from kheaders.values import LONG, TEXT, VARLONG
from tests.support.header_function_cases import CASES

pytestmark = pytest.mark.spark

T = TypeVar("T")
HEADERS_TYPE = "array<struct<key:string,value:binary>>"


# -- the Python side ------------------------------------------------------------------------


def decoded(headers: Headers, key: str, codec: ValueCodec[T]) -> T | None:
    """``last_value`` with a kheaders.values codec; None where it is absent or raises."""
    try:
        value = headers.last_value(key, codec)
    except DecodeError:
        return None
    return value  # type: ignore[return-value]


def python_answers(headers: list[tuple[str, bytes | None]] | None, key: str) -> dict[str, object]:
    h = Headers(headers)
    last = h.last_value(key)
    tp = extract_trace_parent(h)
    return {
        "last": last,
        "values": h.values(key),
        "text": decoded(h, key, TEXT),
        "long": decoded(h, key, LONG),
        "varlong": decoded(h, key, VARLONG),
        "trace_id": tp.trace_id_hex if tp else None,
        "span_id": tp.parent_id_hex if tp else None,
        "map": h.to_dict(),
        "added": h.copy().add(key, b"new").to_list(),
        "set": h.copy().set(key, b"new").to_list(),
    }


# -- the Spark side -------------------------------------------------------------------------


def spark_answers(spark: SparkSession) -> DataFrame:
    rows = [
        (i, key, headers)
        for i, case in enumerate(CASES)
        for key in case.keys
        for headers in [case.headers]
    ]
    df = spark.createDataFrame(rows, f"case int, key string, headers {HEADERS_TYPE}")
    k = sf.col("key")
    return df.select(
        "case",
        "key",
        header_last("headers", k).alias("last"),
        header_values("headers", k).alias("values"),
        header_text("headers", k).alias("text"),
        header_long(df.headers, k).alias("long"),
        header_varlong("headers", k).alias("varlong"),
        trace_id("headers").alias("trace_id"),
        parent_span_id("headers").alias("span_id"),
        headers_to_map("headers").alias("map"),
        with_header("headers", k, b"new").alias("added"),
        set_header("headers", k, b"new").alias("set"),
    )


def sql_answers(spark: SparkSession) -> DataFrame:
    """The same answers through the SQL functions ``register_functions`` creates."""
    assert register_functions(spark) == list(FUNCTIONS)
    rows = [(i, key, case.headers) for i, case in enumerate(CASES) for key in case.keys]
    df = spark.createDataFrame(rows, f"case int, key string, headers {HEADERS_TYPE}")
    df.createOrReplaceTempView("kheaders_cases")
    new = "CAST('new' AS BINARY)"
    return spark.sql(
        f"""SELECT case, key,
          header_last(headers, key) AS last, header_values(headers, key) AS values,
          header_text(headers, key) AS text, header_long(headers, key) AS long,
          header_varlong(headers, key) AS varlong, trace_id(headers) AS trace_id,
          parent_span_id(headers) AS span_id, headers_to_map(headers) AS map,
          with_header(headers, key, {new}) AS added, set_header(headers, key, {new}) AS set
        FROM kheaders_cases"""
    )


def _plain(row_value: object) -> object:
    if isinstance(row_value, bytearray):
        return bytes(row_value)
    if isinstance(row_value, list):
        return [_plain(v) for v in row_value]
    if isinstance(row_value, dict):
        return {k: _plain(v) for k, v in row_value.items()}
    if isinstance(row_value, tuple):  # Row
        return tuple(_plain(v) for v in row_value)
    return row_value


@pytest.mark.parametrize("form", ["column", "sql"])
def test_every_function_matches_kheaders_headers_on_the_shared_table(
    spark: SparkSession, form: str
) -> None:
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    result = spark_answers(spark) if form == "column" else sql_answers(spark)
    plan = result._jdf.queryExecution().toString()
    assert "PythonUDF" not in plan
    assert "BatchEvalPython" not in plan
    rows = result.collect()
    assert len(rows) == sum(len(c.keys) for c in CASES)
    mismatches = []
    for row in rows:
        case = CASES[row["case"]]
        expected = python_answers(case.headers, row["key"])
        got = {name: _plain(row[name]) for name in expected}
        if got != expected:
            diff = {n: (got[n], expected[n]) for n in expected if got[n] != expected[n]}
            mismatches.append((case.name, row["key"], diff))
    assert not mismatches, mismatches[:5]


def test_the_table_exercises_every_outcome() -> None:
    """The shared table is not vacuous: each reader sees both values and NULLs."""
    answers = [python_answers(c.headers, k) for c in CASES for k in c.keys]
    for name in ("last", "text", "long", "varlong", "trace_id"):
        assert any(a[name] is None for a in answers), name
        assert any(a[name] is not None for a in answers), name
    assert any(len(a["values"]) > 1 for a in answers)  # type: ignore[arg-type]


def test_string_key_and_python_values_are_accepted(spark: SparkSession) -> None:
    df = spark.createDataFrame([([("a", b"1")],)], f"headers {HEADERS_TYPE}")
    row = df.select(
        with_header("headers", "t", "ü").alias("w"),
        set_header("headers", "a", None).alias("s"),
        header_text(with_header("headers", "t", "ü"), "t").alias("t"),
    ).first()
    assert row is not None
    assert _plain(row["w"]) == [("a", b"1"), ("t", "ü".encode())]
    assert _plain(row["s"]) == [("a", None)]
    assert row["t"] == "ü"
