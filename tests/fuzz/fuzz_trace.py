"""Fuzz W3C trace context parsing: untrusted headers give None/[] and never raise."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.fuzz._harness import instrumented

with instrumented(__name__ == "__main__"):
    from kheaders import Headers
    from kheaders.tracecontext import (
        TraceParent,
        extract_trace_parent,
        extract_trace_state,
        parse_traceparent,
        parse_tracestate,
    )

_PREFIX = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-"


def check(data: bytes) -> None:
    for value in (data, _PREFIX + data, data.decode("latin-1")):
        parent = parse_traceparent(value)
        assert parent is None or isinstance(parent, TraceParent)
        if parent is not None and parent.version == 0:
            assert parse_traceparent(parent.header()) == parent
        members = parse_tracestate(value)
        assert len(members) <= 32
        assert sum(len(k) + len(v) + 1 for k, v in members) + max(len(members) - 1, 0) <= 512
    half = len(data) // 2
    headers = Headers([("traceparent", _PREFIX + data[:half]), ("tracestate", data[half:])])
    extract_trace_parent(headers)
    extract_trace_state(headers)


if __name__ == "__main__":
    from tests.fuzz._harness import main

    main(check)
