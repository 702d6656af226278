"""kheaders on Spark: header column functions, KIP-280 compaction in Spark SQL, the pipeline."""

from __future__ import annotations

from kheaders.spark._compact import compact
from kheaders.spark._functions import (
    header_last,
    header_long,
    header_text,
    header_values,
    header_varlong,
    headers_to_map,
    parent_span_id,
    set_header,
    trace_id,
    with_header,
)

__all__ = [
    "compact",
    "header_last",
    "header_long",
    "header_text",
    "header_values",
    "header_varlong",
    "headers_to_map",
    "parent_span_id",
    "set_header",
    "trace_id",
    "with_header",
]
