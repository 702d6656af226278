"""The demo's audit on crafted records: whole traces pass, every kind of break is reported."""

from __future__ import annotations

import confluent_kafka

from kheaders.demo import AuditRecord, audit, audit_record, format_audit

T1 = "0af7651916cd43dd8448eb211c80319c"
T2 = "4bf92f3577b34da6a3ce929d0e0e4736"


def _order(trace: str | None, offset: int, ts: int = 1000, corr: str = "c1") -> AuditRecord:
    return AuditRecord("orders", 0, offset, ts, "k", trace, "orders-service", corr)


def _shipment(trace: str | None, offset: int, ts: int = 1012, corr: str = "c1") -> AuditRecord:
    return AuditRecord("shipments", 1, offset, ts, "k", trace, "shipping-service", corr)


def test_whole_traces_pass_with_hops_clients_and_latency() -> None:
    report = audit(
        [_shipment(T1, 0), _order(T1, 0), _order(T2, 1, 2000, "c2"), _shipment(T2, 1, 2030, "c2")],
        "orders",
        "shipments",
        expected=2,
    )
    assert report.ok
    assert (report.records_in, report.records_out, report.complete) == (2, 2, 2)
    first = report.traces[0]
    assert first.trace_id == T1
    assert [r.topic for r in first.hops] == ["orders", "shipments"]
    assert first.client_ids == ("orders-service", "shipping-service")
    assert first.latencies_ms == (12,)
    text = format_audit(report)
    assert "client ids per trace: orders-service -> shipping-service" in text
    assert "min 12 ms, median 21 ms, max 30 ms" in text
    assert text.endswith("RESULT: OK")


def test_a_summary_lists_no_trace_and_says_nothing_of_more_traces() -> None:
    records = [_order(T1, 0), _shipment(T1, 0), _order(T2, 1), _shipment(T2, 1)]
    report = audit(records, "orders", "shipments", expected=2)
    summary = format_audit(report, 0)  # the demo's second audit
    assert "more traces" not in summary
    assert "  trace " not in summary
    assert "traces: 2  complete across both hops: 2" in summary
    one = format_audit(report, 1).splitlines()
    assert sum(line.startswith("  trace ") for line in one) == 1
    assert "  ... 1 more traces" in one


def test_a_shipment_in_another_trace_is_a_broken_trace() -> None:
    report = audit([_order(T1, 0), _shipment(T2, 0)], "orders", "shipments")
    assert not report.ok
    assert report.complete == 0
    assert any("orders record without a shipments record" in p for p in report.problems)
    assert any("whose trace has no orders record" in p for p in report.problems)
    assert format_audit(report).endswith("RESULT: FAILED")


def test_a_missing_record_is_reported_against_the_counts() -> None:
    report = audit([_order(T1, 0), _shipment(T1, 0)], "orders", "shipments", expected=2)
    assert report.problems == ("expected 2 orders records, read 1",)
    lost = audit([_order(T1, 0), _order(T2, 1)], "orders", "shipments")
    assert "records in (orders) 2 != records out (shipments) 0" in lost.problems


def test_a_record_without_trace_context_breaks_the_audit() -> None:
    report = audit([_order(T1, 0), _shipment(None, 3)], "orders", "shipments")
    assert "shipments[1]@3: no valid traceparent (trace broken)" in report.problems


def test_duplicates_and_changed_correlation_ids_are_problems() -> None:
    dup = audit([_order(T1, 0), _shipment(T1, 0), _shipment(T1, 1)], "orders", "shipments")
    assert any("unexpected hops orders -> shipments -> shipments" in p for p in dup.problems)
    corr = audit([_order(T1, 0), _shipment(T1, 0, corr="other")], "orders", "shipments")
    assert any("correlation id not carried" in p for p in corr.problems)


def test_records_of_other_topics_are_ignored() -> None:
    other = AuditRecord("payments", 0, 0, 5, None, T2, "x", "c9")
    report = audit([_order(T1, 0), _shipment(T1, 0), other], "orders", "shipments")
    assert report.ok


def test_audit_record_reads_the_strict_trace_context_and_ids() -> None:
    tp = f"00-{T1}-b7ad6b7169203331-01"
    headers = [("traceparent", tp.encode()), ("client.id", b"svc"), ("correlation.id", b"c7")]
    msg = confluent_kafka.Message(
        topic="orders",
        partition=2,
        offset=9,
        key=b"order-1",
        headers=headers,
        timestamp=(confluent_kafka.TIMESTAMP_CREATE_TIME, 1234),
    )
    row = audit_record(msg)
    assert row == AuditRecord("orders", 2, 9, 1234, "order-1", T1, "svc", "c7")
    twice = confluent_kafka.Message(
        topic="orders", headers=[("traceparent", tp.encode()), ("traceparent", tp.encode())]
    )
    assert audit_record(twice).trace_id is None  # two traceparents: no parent (W3C)


def test_importing_kheaders_the_cli_and_the_demo_never_imports_interceptors() -> None:
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys, kheaders, kheaders.cli, kheaders.demo\n"
        "kheaders.cli.build_parser()\n"
        "sys.exit(1 if {'interceptors', 'kheaders.interceptors'} & set(sys.modules) else 0)"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=root, check=False, timeout=60)
    assert result.returncode == 0
