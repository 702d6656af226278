"""The header column functions answer exactly like kheaders.Headers, natively, under ANSI mode."""

from __future__ import annotations

import random
from typing import TypeVar

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as sf

from kheaders import DecodeError, Headers
from kheaders._codec.protocol import ValueCodec
from kheaders._codec.varint import write_varlong
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
from tests.spark.codegen import HUGE_METHOD_BYTES, max_method_sizes
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


# -- varlong: every rule of the branch-free decoder ------------------------------------------

_VARLONG_EDGES = [
    b"",
    b"\x00",
    b"\x80" * 8 + b"\x01",  # 9 bytes: the 9th read from the second number
    b"\x80" * 8 + b"\x81",  # 9 bytes, the last one continues
    b"\x80" * 8 + b"\x00\x00",  # 10 bytes, but the 9th ends the varlong
    b"\x80" * 9 + b"\x01",  # 10 bytes: bit 63
    b"\x80" * 9 + b"\x81",  # 10 bytes, the 10th continues
    b"\xff" * 9 + b"\x03",  # the 10th byte above 1
    b"\x7f\xff",  # the first byte ends it
    write_varlong(-(1 << 63)) + b"\x00",  # 11 bytes: a valid 10-byte varlong, then one more
    write_varlong(1 << 40) + b"\x00",  # a trailing byte within 10
    b"\xff" * 11,
]


def _varlong_values(count: int = 3000, seed: int = 280) -> list[bytes]:
    """The edges above and seeded values near varlongs: valid, cut, grown, one bit flipped."""
    rng = random.Random(seed)
    values = list(_VARLONG_EDGES)
    for _ in range(count):
        valid = write_varlong(rng.randrange(-(1 << 63), 1 << 63) >> rng.randrange(64))
        kind = rng.randrange(5)
        if kind == 0:
            values.append(valid)
        elif kind == 1:
            values.append(valid[: rng.randrange(len(valid))])
        elif kind == 2:
            values.append(valid + rng.randbytes(rng.randrange(1, 3)))
        elif kind == 3:
            flipped = bytearray(valid)
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            values.append(bytes(flipped))
        else:  # continuation bits on all but the last byte, any last byte, 1-11 bytes
            n = rng.randrange(1, 12)
            body = bytes(rng.randrange(128, 256) for _ in range(n - 1))
            values.append(body + bytes([rng.randrange(256)]))
    return values


@pytest.mark.parametrize("form", ["column", "sql"])
def test_varlong_matches_the_codec_on_every_rule_edge_and_random_values(
    spark: SparkSession, form: str
) -> None:
    values: list[bytes | None] = [*_varlong_values(), None]
    headers = "array(named_struct('key', 'version', 'value', v)) AS h"
    df = spark.createDataFrame(
        [(i, None if v is None else bytearray(v)) for i, v in enumerate(values)], "i int, v binary"
    ).selectExpr("i", headers)
    if form == "column":
        out = df.select("i", header_varlong("h", "version").alias("d"))
    else:
        register_functions(spark)
        df.createOrReplaceTempView("kheaders_varlongs")
        out = spark.sql("SELECT i, header_varlong(h, 'version') AS d FROM kheaders_varlongs")
    got = {row["i"]: row["d"] for row in out.collect()}
    expected = {
        i: decoded(Headers([("version", v)]), "version", VARLONG) for i, v in enumerate(values)
    }
    assert sum(e is not None for e in expected.values()) > len(values) // 4  # not vacuous
    assert sum(e is None for e in expected.values()) > len(values) // 4
    wrong = [(values[i], got[i], expected[i]) for i in expected if got[i] != expected[i]]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("form", ["column", "sql"])
def test_varlong_reader_compiles_to_methods_the_jit_compiles(
    spark: SparkSession, form: str
) -> None:
    """Each byte is read once and nothing repeats: the generated method stays JIT-sized."""
    df = spark.createDataFrame([([("version", b"\x02")],)], f"headers {HEADERS_TYPE}")
    if form == "column":
        out = df.select(header_varlong("headers", "version"))
    else:
        register_functions(spark)
        df.createOrReplaceTempView("kheaders_one_varlong")
        out = spark.sql("SELECT header_varlong(headers, 'version') FROM kheaders_one_varlong")
    sizes = max_method_sizes(out)
    assert sizes
    assert max(sizes) < HUGE_METHOD_BYTES, sizes
    assert out.first() == (1,)  # zigzag: 0x02 is 1
