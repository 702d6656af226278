"""The header column functions as Spark SQL user-defined functions, callable by name.

``register_functions(spark)`` creates one temporary SQL function per header function of
:mod:`kheaders.spark._functions` (``CREATE TEMPORARY FUNCTION name(...) RETURN <expression>``,
Spark 4's SQL UDFs): the bodies are plain Spark SQL (lambdas included), so no Python runs,
and each answers exactly like its Column builder; the shared table of header cases holds
both to :class:`kheaders.Headers`. Temporary functions live in one SparkSession.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kheaders.spark._functions import _TRACEPARENT, _ZERO_SPAN_ID, _ZERO_TRACE_ID
from kheaders.spark._varlong import varlong_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_H = "ARRAY<STRUCT<key: STRING, value: BINARY>>"
_EMPTY = f"CAST(array() AS {_H})"
_LAST = (  # as header_last: no lambda, so Spark compiles it; get() is NULL out of range
    "get(h, CAST(size(h) - array_position(reverse(h.key), k) AS INT)).value"
)


def _traceparent(group: int) -> str:
    values = "filter(h, x -> x.key = 'traceparent')"
    text = f"CAST(try_element_at({values}, 1).value AS STRING)"
    rx = f"r'{_TRACEPARENT}'"

    def part(g: int) -> str:
        return f"regexp_extract({text}, {rx}, {g})"

    valid = (
        f"size({values}) = 1 AND {text} RLIKE {rx} AND {part(1)} != 'ff'"
        f" AND ({part(1)} != '00' OR {part(5)} = '')"
        f" AND {part(2)} != '{_ZERO_TRACE_ID}' AND {part(3)} != '{_ZERO_SPAN_ID}'"
    )
    return f"CASE WHEN coalesce({valid}, false) THEN {part(group)} END"


def _set_header() -> str:
    hs = f"coalesce(h, {_EMPTY})"
    first = f"array_position(transform({hs}, x -> x.key), k)"
    new = "array(named_struct('key', k, 'value', v))"
    after = (
        f"filter(slice({hs}, greatest({first}, 1) + 1, greatest(size({hs}), 1)),"
        " x -> NOT (x.key <=> k))"
    )
    replaced = f"concat(slice({hs}, 1, greatest({first} - 1, 0)), {new}, {after})"
    return f"CASE WHEN {first} = 0 THEN concat({hs}, {new}) ELSE {replaced} END"


def _to_map() -> str:
    hs = f"coalesce(h, {_EMPTY})"
    keys = f"array_distinct(filter(transform({hs}, x -> x.key), y -> y IS NOT NULL))"
    last = f"try_element_at(filter({hs}, x -> x.key = z), -1).value"
    return f"map_from_arrays({keys}, transform({keys}, z -> {last}))"


# name -> (parameters, return type, body)
FUNCTIONS: dict[str, tuple[str, str, str]] = {
    "header_last": (f"h {_H}, k STRING", "BINARY", _LAST),
    "header_values": (
        f"h {_H}, k STRING",
        "ARRAY<BINARY>",
        "coalesce(transform(filter(h, x -> x.key = k), x -> x.value), CAST(array() AS"
        " ARRAY<BINARY>))",
    ),
    "header_text": (f"h {_H}, k STRING", "STRING", f"try_validate_utf8(CAST({_LAST} AS STRING))"),
    "header_long": (
        f"h {_H}, k STRING",
        "BIGINT",
        f"CASE WHEN octet_length({_LAST}) = 8 THEN CAST(conv(hex({_LAST}), 16, -10) AS BIGINT) END",
    ),
    "header_varlong": (f"h {_H}, k STRING", "BIGINT", varlong_sql(_LAST)),
    "trace_id": (f"h {_H}", "STRING", _traceparent(2)),
    "parent_span_id": (f"h {_H}", "STRING", _traceparent(3)),
    "with_header": (
        f"h {_H}, k STRING, v BINARY",
        _H,
        f"concat(coalesce(h, {_EMPTY}), array(named_struct('key', k, 'value', v)))",
    ),
    "set_header": (f"h {_H}, k STRING, v BINARY", _H, _set_header()),
    "headers_to_map": (f"h {_H}", "MAP<STRING, BINARY>", _to_map()),
}


def register_functions(spark: SparkSession) -> list[str]:
    """Make the header functions callable by name from ``spark.sql`` in this session.

    ``SELECT header_text(headers, 'client.id'), trace_id(headers) FROM t`` then runs
    natively; the functions are temporary (this session only; calling again replaces them).
    Returns the names registered.
    """
    for name, (params, returns, body) in FUNCTIONS.items():
        spark.sql(
            f"CREATE OR REPLACE TEMPORARY FUNCTION {name}({params}) RETURNS {returns} RETURN {body}"
        )
    return list(FUNCTIONS)
