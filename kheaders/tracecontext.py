"""W3C Trace Context in record headers: strict ``traceparent`` / ``tracestate`` parsing.

What kheaders' tracing interceptors use, for code that reads or writes trace context itself:
:func:`extract_trace_parent` takes the one valid ``traceparent`` of a record's headers (two or
more, or an invalid one, mean none); :func:`parse_traceparent` and :func:`parse_tracestate`
parse one value; :func:`format_tracestate` writes a list back. Nothing here raises on any
input: bad input gives ``None`` or an empty list (the rules: docs/interceptors.md).

>>> from kheaders import Headers
>>> tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
>>> extract_trace_parent(Headers([("traceparent", tp)])).sampled
True
>>> extract_trace_parent(Headers([("traceparent", tp), ("traceparent", tp)])) is None
True

These names were importable from ``kheaders`` itself until 0.1; that still works, with a
DeprecationWarning, for one more release.
"""

from kheaders import _public
from kheaders._model.traceparent import (
    TraceParent,
    extract_trace_parent,
    extract_trace_state,
    format_tracestate,
    parse_traceparent,
    parse_tracestate,
)

__all__ = [
    "TraceParent",
    "extract_trace_parent",
    "extract_trace_state",
    "format_tracestate",
    "parse_traceparent",
    "parse_tracestate",
]
_public.claim(__name__, globals())
