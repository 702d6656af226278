"""The demo's audit: per trace id, the hops a record took, who wrote them, and how long it took.

:func:`audit` is pure (records in, :class:`AuditReport` out) so it can be checked on crafted
records; :func:`audit_record` turns a consumed record into the small row it works on.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from confluent_kafka import Message

from kheaders import Headers
from kheaders._model.received import message_headers
from kheaders.tracecontext import extract_trace_parent

CLIENT_ID_HEADER = "client.id"
CORRELATION_HEADER = "correlation.id"


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One record as the audit sees it (ids as text, ``None`` when absent or invalid)."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    key: str | None = None
    trace_id: str | None = None
    client_id: str | None = None
    correlation_id: str | None = None


def _text(value: bytes | None) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8", "replace")


def audit_record(msg: Message) -> AuditRecord:
    """The audit row of a consumed record (headers read with the strict W3C rules)."""
    raw = message_headers(msg)
    headers = raw if isinstance(raw, Headers) else Headers(raw)
    parent = extract_trace_parent(headers)
    key = msg.key()
    _, timestamp = msg.timestamp()
    return AuditRecord(
        topic=msg.topic() or "",
        partition=msg.partition() or 0,
        offset=msg.offset() or 0,
        timestamp_ms=timestamp,
        key=_text(key) if isinstance(key, bytes) else (key if isinstance(key, str) else None),
        trace_id=None if parent is None else parent.trace_id_hex,
        client_id=_text(headers.last_value(CLIENT_ID_HEADER)),
        correlation_id=_text(headers.last_value(CORRELATION_HEADER)),
    )


@dataclass(frozen=True, slots=True)
class TraceHops:
    """One trace: its records in hop order (the source topic first, then by timestamp)."""

    trace_id: str
    hops: tuple[AuditRecord, ...]

    @property
    def client_ids(self) -> tuple[str | None, ...]:
        """The client id of each hop."""
        return tuple(r.client_id for r in self.hops)

    @property
    def latencies_ms(self) -> tuple[int, ...]:
        """Timestamp gaps between consecutive hops."""
        return tuple(b.timestamp_ms - a.timestamp_ms for a, b in pairwise(self.hops))


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The audit's verdict: counts in and out, complete traces, and every problem found."""

    source: str
    sink: str
    records_in: int
    records_out: int
    expected: int | None
    traces: tuple[TraceHops, ...]
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """No problem: every record arrived, and every trace is one source hop then one sink hop."""
        return not self.problems

    @property
    def complete(self) -> int:
        """Traces with exactly one source record and one sink record."""
        return sum(1 for t in self.traces if _shape(t, self.source, self.sink) is None)


def _shape(trace: TraceHops, source: str, sink: str) -> str | None:
    topics = [r.topic for r in trace.hops]
    if topics == [source, sink]:
        corr = {r.correlation_id for r in trace.hops}
        if len(corr) != 1 or None in corr:
            return f"trace {trace.trace_id}: correlation id not carried across hops ({corr})"
        return None
    if topics == [source]:
        return f"trace {trace.trace_id}: {source} record without a {sink} record (missing)"
    if source not in topics:
        return f"trace {trace.trace_id}: {sink} record(s) whose trace has no {source} record"
    return f"trace {trace.trace_id}: unexpected hops {' -> '.join(topics)}"


def audit(
    records: Iterable[AuditRecord], source: str, sink: str, expected: int | None = None
) -> AuditReport:
    """Group ``records`` by trace id and check each trace is ``source`` -> ``sink``, once each.

    Problems reported: a record without a valid trace context, a source record with no sink
    record, a sink record with no source record (a broken trace), duplicates, a correlation
    id that changed, and counts in/out that differ from each other or from ``expected``.

    >>> order = AuditRecord("orders", 0, 0, 1000, "k", "ab" * 16, "orders-service", "c1")
    >>> ship = AuditRecord("shipments", 0, 0, 1007, "k", "ab" * 16, "shipping-service", "c1")
    >>> report = audit([order, ship], "orders", "shipments", expected=1)
    >>> report.ok, report.traces[0].latencies_ms, report.traces[0].client_ids
    (True, (7,), ('orders-service', 'shipping-service'))
    >>> audit([order], "orders", "shipments").problems[-1]
    'records in (orders) 1 != records out (shipments) 0'
    """
    rows = list(records)
    problems: list[str] = []
    by_trace: dict[str, list[AuditRecord]] = {}
    for row in rows:
        if row.topic not in (source, sink):
            continue
        if row.trace_id is None:
            problems.append(
                f"{row.topic}[{row.partition}]@{row.offset}: no valid traceparent (trace broken)"
            )
            continue
        by_trace.setdefault(row.trace_id, []).append(row)
    traces = tuple(
        TraceHops(tid, tuple(sorted(hops, key=lambda r: (r.topic != source, r.timestamp_ms))))
        for tid, hops in sorted(by_trace.items(), key=lambda kv: min(r.timestamp_ms for r in kv[1]))
    )
    for trace_hops in traces:
        problem = _shape(trace_hops, source, sink)
        if problem is not None:
            problems.append(problem)
    records_in = sum(1 for r in rows if r.topic == source)
    records_out = sum(1 for r in rows if r.topic == sink)
    if records_in != records_out:
        problems.append(f"records in ({source}) {records_in} != records out ({sink}) {records_out}")
    if expected is not None and records_in != expected:
        problems.append(f"expected {expected} {source} records, read {records_in}")
    return AuditReport(source, sink, records_in, records_out, expected, traces, tuple(problems))


def _hop_text(row: AuditRecord) -> str:
    return f"{row.topic}[{row.partition}]@{row.offset} ({row.client_id or '-'})"


def format_audit(report: AuditReport, show: int | None = None) -> str:
    """The report as text: counts, client ids, latency summary, one line per trace (up to
    ``show`` of them and how many more; ``None``: all; ``0``: none, a summary), the problems,
    and ``RESULT: OK`` or ``RESULT: FAILED``.
    """
    lines = [
        f"audit: {report.source} -> {report.sink}",
        f"records in ({report.source}): {report.records_in}"
        f"  records out ({report.sink}): {report.records_out}"
        + (f"  expected: {report.expected}" if report.expected is not None else ""),
        f"traces: {len(report.traces)}  complete across both hops: {report.complete}"
        f"  problems: {len(report.problems)}",
    ]
    paths = sorted({" -> ".join(c or "-" for c in t.client_ids) for t in report.traces})
    lines.append(f"client ids per trace: {'; '.join(paths) or '-'}")
    gaps: list[int] = [g for t in report.traces for g in t.latencies_ms]
    if gaps:
        lines.append(
            f"latency {report.source} -> {report.sink} (record timestamps):"
            f" min {min(gaps)} ms, median {statistics.median(gaps):g} ms, max {max(gaps)} ms"
        )
    shown: Sequence[TraceHops] = report.traces if show is None else report.traces[:show]
    for t in shown:
        hops = " -> ".join(_hop_text(r) for r in t.hops)
        gap = ", ".join(f"+{g} ms" for g in t.latencies_ms) or "-"
        lines.append(f"  trace {t.trace_id}  {hops}  latency {gap}")
    if shown and len(shown) < len(report.traces):  # show=0: a summary, no trace lines at all
        lines.append(f"  ... {len(report.traces) - len(shown)} more traces")
    lines.extend(f"PROBLEM: {p}" for p in report.problems)
    lines.append("RESULT: OK" if report.ok else "RESULT: FAILED")
    return "\n".join(lines)
