"""CloudEvents attributes as columns: native Spark SQL over a record's headers and value.

Each rule is one SQL expression, used twice: as the body of a temporary SQL function
(:func:`register_cloudevent_functions`) and, with the column names put in, by the Column
builders (:func:`cloudevent_attribute`, :func:`cloudevent_time`,
:func:`cloudevent_columns`). No Python runs per row.

The content mode is read as the Kafka binding says: a record whose single ``content-type``
header starts with ``application/cloudevents`` (any case) is structured and its attributes
come from the JSON value (``get_json_object``: numbers and booleans as their JSON text);
any other record is binary and its attributes are its ``ce_<name>`` headers (the key in any
case), ``datacontenttype`` its ``content-type``. NULL where the attribute is absent, its
header is given more than once, its bytes are not UTF-8, or the name is not lower-case
letters and digits. These are columns, not validation:
:class:`kheaders.cloudevents.CloudEventDeserializer` validates.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as sf

from kheaders._errors import CloudEventError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_H = "ARRAY<STRUCT<key: STRING, value: BINARY>>"
_NAME = re.compile(r"[a-z0-9]{1,256}")
_CONTENT_TYPES = "filter({h}, x -> lower(x.key) = 'content-type')"
_STRUCTURED = (
    f"size({_CONTENT_TYPES}) = 1 AND lower(try_validate_utf8(CAST("
    f"try_element_at({_CONTENT_TYPES}, 1).value AS STRING))) LIKE 'application/cloudevents%'"
)
_MATCHES = (
    "filter({h}, x -> lower(x.key) = "
    "(CASE WHEN {n} = 'datacontenttype' THEN 'content-type' ELSE 'ce_' || {n} END))"
)
_FROM_HEADERS = (
    f"CASE WHEN size({_MATCHES}) = 1"
    f" THEN try_validate_utf8(CAST(try_element_at({_MATCHES}, 1).value AS STRING)) END"
)
_FROM_VALUE = "get_json_object(try_validate_utf8(CAST({v} AS STRING)), '$.' || {n})"
ATTRIBUTE = (
    "CASE WHEN {n} RLIKE '^[a-z0-9]{{1,256}}$' THEN"
    f" CASE WHEN coalesce({_STRUCTURED}, false) THEN {_FROM_VALUE} ELSE {_FROM_HEADERS} END END"
)
"""The attribute ``{n}`` (text) of the record with headers ``{h}`` and value ``{v}``."""
TIME = f"try_to_timestamp({ATTRIBUTE})"
"""The record's ``time`` as a timestamp (``{n}`` is ``'time'``)."""

CORE = ("specversion", "id", "source", "type", "subject", "time", "datacontenttype", "dataschema")
"""The attributes the spec defines, in the order :func:`cloudevent_columns` gives them."""


def _quoted(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def _checked(name: str) -> str:
    if _NAME.fullmatch(name) is None:
        raise CloudEventError(
            f"attribute name {name!r} must be lower-case letters a-z and digits 0-9 only",
            attribute=name,
        )
    return f"'{name}'"


def cloudevent_attribute(name: str, headers: str = "headers", value: str = "value") -> Column:
    """The CloudEvents attribute ``name`` of each record as text (see the module doc).

    ``headers`` and ``value`` name the data source's columns. Raises CloudEventError for a
    name that is not lower-case letters and digits.
    """
    return sf.expr(ATTRIBUTE.format(h=_quoted(headers), v=_quoted(value), n=_checked(name)))


def cloudevent_time(headers: str = "headers", value: str = "value") -> Column:
    """Each record's ``time`` attribute as a timestamp (NULL when absent or not a time)."""
    return sf.expr(TIME.format(h=_quoted(headers), v=_quoted(value), n="'time'"))


def cloudevent_columns(
    *extensions: str, headers: str = "headers", value: str = "value"
) -> list[Column]:
    """Columns ``ce_<name>`` for the spec's attributes and the given ``extensions``
    (``ce_time`` a timestamp, the others text): ``df.select("*", *cloudevent_columns())``.

    Raises CloudEventError for an extension name that is not lower-case letters and digits.
    """
    return [
        (
            cloudevent_time(headers, value)
            if n == "time"
            else cloudevent_attribute(n, headers, value)
        ).alias(f"ce_{n}")
        for n in (*CORE, *extensions)
    ]


def register_cloudevent_functions(spark: SparkSession) -> list[str]:
    """Make ``cloudevent_attribute(headers, value, name)`` and ``cloudevent_time(headers,
    value)`` callable by name from ``spark.sql`` in this session (temporary functions).
    Returns the names registered."""
    functions = {
        "cloudevent_attribute": (
            f"h {_H}, v BINARY, n STRING",
            "STRING",
            ATTRIBUTE.format(h="h", v="v", n="n"),
        ),
        "cloudevent_time": (
            f"h {_H}, v BINARY",
            "TIMESTAMP",
            TIME.format(h="h", v="v", n="'time'"),
        ),
    }
    for name, (params, returns, body) in functions.items():
        spark.sql(
            f"CREATE OR REPLACE TEMPORARY FUNCTION {name}({params}) RETURNS {returns} RETURN {body}"
        )
    return list(functions)
