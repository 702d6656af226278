"""Header column functions: KIP-82 header reads and edits as native Spark SQL expressions.

Every function takes the ``headers`` column (``array<struct<key: string, value: binary>>``,
as a Column or a column name) and returns a Column built only from Spark SQL expressions (no
Python UDF), so it runs in the JVM, in streaming queries too, and under ANSI mode.

They answer exactly like :class:`kheaders.Headers` on the same record. A NULL ``headers``
column means "no headers" (Spark's own Kafka connector gives NULL, not ``[]``, for a record
without headers): readers give NULL (``header_values``: ``[]``, ``headers_to_map``: ``{}``)
and writers start from an empty array.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as sf

from kheaders.spark._varlong import varlong_of

ColumnOrName = Column | str
"""A Column, or the name of one."""

_HEX_BYTE = "[0-9a-f]"
# W3C Trace Context as kheaders._model.traceparent reads it: ASCII only, optional spaces/tabs
# around the value, version-traceid-parentid-flags in lowercase hex, and after the 55
# characters of version 00 a future version may carry "-..." (group 5, lazy so trailing
# white space is not part of it). \z, not $: Java's $ also matches before a final newline.
_TRACEPARENT = (
    rf"^[ \t]*({_HEX_BYTE}{{2}})-({_HEX_BYTE}{{32}})-({_HEX_BYTE}{{16}})-({_HEX_BYTE}{{2}})"
    r"(-[\x00-\x7f]*?)?[ \t]*\z"
)
_ZERO_TRACE_ID = "0" * 32
_ZERO_SPAN_ID = "0" * 16


def _col(headers: ColumnOrName) -> Column:
    return sf.col(headers) if isinstance(headers, str) else headers


def _lit(value: Column | str | bytes | None, cast: str) -> Column:
    if isinstance(value, Column):
        return value.cast(cast)
    if isinstance(value, str) and cast == "binary":
        value = value.encode("utf-8")
    if isinstance(value, bytes | bytearray):
        return sf.lit(bytearray(value)).cast(cast)
    return sf.lit(value).cast(cast)


def _matching(headers: ColumnOrName, key: Column | str) -> Column:
    """The headers whose key is ``key``, in order (NULL when ``headers`` is NULL)."""
    k = _lit(key, "string")
    return sf.filter(_col(headers), lambda h: h["key"] == k)


def header_values(headers: ColumnOrName, key: Column | str) -> Column:
    """Every value of ``key`` in order (``array<binary>``, ``[]`` when absent or NULL headers).

    Like :meth:`kheaders.Headers.values`; a null header gives a NULL element.
    """
    return sf.coalesce(
        sf.transform(_matching(headers, key), lambda h: h["value"]),
        sf.array().cast("array<binary>"),
    )


def header_last(headers: ColumnOrName, key: Column | str) -> Column:
    """The last value of ``key`` (binary), or NULL when absent, null, or headers are NULL.

    Like :meth:`kheaders.Headers.last_value`; never throws under ANSI mode.
    """
    # No lambda (Spark interprets lambdas row by row): the keys as one array, the last match
    # found from the end by array_position (0 when absent), then that one header taken by
    # ``get`` (0-based, NULL out of range, so "absent" needs no CASE that would repeat the
    # search) and only its value read. All of it compiles to Java code.
    hs = _col(headers)
    from_end = sf.array_position(sf.reverse(hs["key"]), _lit(key, "string"))
    return sf.get(hs, (sf.size(hs) - from_end).cast("int"))["value"]


def _utf8(value: Column) -> Column:
    """Binary to string, NULL unless ``value`` is valid UTF-8 (strict, like Python's codec)."""
    return sf.try_validate_utf8(value.cast("string"))


def header_text(headers: ColumnOrName, key: Column | str) -> Column:
    """The last value of ``key`` decoded as UTF-8 text, or NULL.

    NULL when the header is absent, null, or its bytes are not valid UTF-8 (strictly: no
    overlong forms, surrogates or truncated sequences; nothing is replaced by U+FFFD, so a
    wrong byte never turns into plausible text).
    """
    return _utf8(header_last(headers, key))


def _long_of(value: Column) -> Column:
    """8-byte big-endian signed long (Kafka's ``LongSerializer``) or NULL for any other length."""
    return sf.when(
        sf.octet_length(value) == 8, sf.conv(sf.hex(value), 16, -10).cast("bigint")
    ).otherwise(sf.lit(None).cast("bigint"))


def header_long(headers: ColumnOrName, key: Column | str) -> Column:
    """The last value of ``key`` as an 8-byte big-endian signed long; NULL unless 8 bytes.

    Like ``headers.last_value(key, kheaders.values.LONG)``, with NULL where that raises.
    """
    return _long_of(header_last(headers, key))


def header_varlong(headers: ColumnOrName, key: Column | str) -> Column:
    """The last value of ``key`` as one zigzag varlong (KIP-280's broker patch); NULL if bad.

    Like ``headers.last_value(key, kheaders.values.VARLONG)``, with NULL where that raises.
    """
    return varlong_of(header_last(headers, key))


def _traceparent_part(headers: ColumnOrName, group: int) -> Column:
    values = header_values(headers, "traceparent")
    text = sf.try_element_at(values, sf.lit(1)).cast("string")
    version = sf.regexp_extract(text, _TRACEPARENT, 1)
    valid = (
        (sf.size(values) == 1)
        & text.rlike(_TRACEPARENT)
        & (version != "ff")
        & ((version != "00") | (sf.regexp_extract(text, _TRACEPARENT, 5) == ""))
        & (sf.regexp_extract(text, _TRACEPARENT, 2) != _ZERO_TRACE_ID)
        & (sf.regexp_extract(text, _TRACEPARENT, 3) != _ZERO_SPAN_ID)
    )
    part = sf.regexp_extract(text, _TRACEPARENT, group)
    return sf.when(sf.coalesce(valid, sf.lit(False)), part).otherwise(sf.lit(None).cast("string"))


def trace_id(headers: ColumnOrName) -> Column:
    """The 32-hex-digit trace id of the record's W3C ``traceparent`` header, or NULL.

    NULL when there is no ``traceparent``, more than one (a restarted trace), or it is
    invalid by W3C Trace Context: not lowercase hex, version ``ff``, an all-zero trace or
    span id, wrong field lengths or counts, trailing data after version ``00``, a future
    version whose extra data does not start with ``-``, or bytes that are not ASCII.
    Spaces and tabs around the value are ignored. Same answers as
    ``kheaders._model.traceparent.extract_trace_parent``.
    """
    return _traceparent_part(headers, 2)


def parent_span_id(headers: ColumnOrName) -> Column:
    """The 16-hex-digit parent span id of the W3C ``traceparent`` header, or NULL.

    NULL in exactly the cases :func:`trace_id` is.
    """
    return _traceparent_part(headers, 3)


def _header(key: Column | str, value: Column | str | bytes | None) -> Column:
    return sf.struct(_lit(key, "string").alias("key"), _lit(value, "binary").alias("value"))


def _or_empty(headers: ColumnOrName) -> Column:
    return sf.coalesce(_col(headers), sf.array().cast("array<struct<key:string,value:binary>>"))


def with_header(
    headers: ColumnOrName, key: Column | str, value: Column | str | bytes | None
) -> Column:
    """The headers with ``key=value`` appended (``Headers.add``); NULL headers count as none.

    ``value`` may be a Column, ``bytes``, ``str`` (stored as UTF-8) or ``None`` (a null header).
    """
    return sf.concat(_or_empty(headers), sf.array(_header(key, value)))


def set_header(
    headers: ColumnOrName, key: Column | str, value: Column | str | bytes | None
) -> Column:
    """Every ``key`` header replaced by one ``key=value`` (``Headers.set``).

    The new header takes the place of the first old one, or goes at the end when there was
    none; NULL headers count as none.
    """
    hs = _or_empty(headers)
    k = _lit(key, "string")
    first = sf.array_position(sf.transform(hs, lambda h: h["key"]), k)
    new = sf.array(_header(key, value))
    kept_after = sf.filter(
        sf.slice(hs, sf.greatest(first, sf.lit(1)) + 1, sf.greatest(sf.size(hs), sf.lit(1))),
        lambda h: ~h["key"].eqNullSafe(k),
    )
    replaced = sf.concat(sf.slice(hs, 1, sf.greatest(first - 1, sf.lit(0))), new, kept_after)
    return sf.when(first == 0, sf.concat(hs, new)).otherwise(replaced)


def headers_to_map(headers: ColumnOrName) -> Column:
    """A ``map<string, binary>`` in which the last header of each key wins (``to_dict``).

    Never throws on duplicate keys (``map_from_entries`` would under ANSI mode); keys keep
    first-seen order; a null header maps to NULL; NULL headers give an empty map.
    """
    hs = _or_empty(headers)
    all_keys = sf.transform(hs, lambda h: h["key"])
    keys = sf.array_distinct(sf.filter(all_keys, lambda k: k.isNotNull()))
    return sf.map_from_arrays(keys, sf.transform(keys, lambda k: header_last(hs, k)))
