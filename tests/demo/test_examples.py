"""examples/: the three services as separate processes, talking only through the broker."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _service(name: str, bootstrap: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KHEADERS_BOOTSTRAP": bootstrap}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    return subprocess.Popen(
        [sys.executable, "-m", f"examples.{name}", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_orders_shipping_notifications_and_audit_services_agree_over_the_broker(
    bootstrap: str,
) -> None:
    """Three services (two sync, one asyncio) in their own processes, then the audit."""
    run = uuid.uuid4().hex[:8]
    topics = ["--orders-topic", f"orders-{run}", "--shipments-topic", f"shipments-{run}"]
    common = ["--count", "12", "--timeout", "90", *topics]
    notify_topic = ["--notifications-topic", f"notifications-{run}"]
    shipping = _service("shipping", bootstrap, *common, "--group", f"shipping-{run}")
    notifications = _service(
        "notifications", bootstrap, *common, *notify_topic, "--group", f"notify-{run}"
    )
    orders = _service("orders", bootstrap, *common)
    orders_out, orders_err = orders.communicate(timeout=120)
    shipping_out, shipping_err = shipping.communicate(timeout=120)
    notify_out, notify_err = notifications.communicate(timeout=120)
    assert orders.returncode == 0, orders_err
    assert "orders: 12 delivered" in orders_out
    assert shipping.returncode == 0, shipping_err
    assert "shipping: 12 orders read, 12 shipments delivered, 0 failed" in shipping_out
    assert notifications.returncode == 0, notify_err
    assert "notifications: 12 shipments read, 12 notifications delivered, 0 failed" in notify_out
    audit = _service("audit", bootstrap, *common, *notify_topic)
    out, err = audit.communicate(timeout=120)
    assert audit.returncode == 0, out + err
    assert f"records in (orders-{run}): 12  records out (shipments-{run}): 12" in out
    assert "complete across both hops: 12  problems: 0" in out
    assert "client ids per trace: orders-service -> shipping-service" in out
    assert len([line for line in out.splitlines() if line.startswith("  trace ")]) == 12
    # the sync -> asyncio hop: every shipment's trace goes on in its notification
    assert f"records in (shipments-{run}): 12  records out (notifications-{run}): 12" in out
    assert "client ids per trace: shipping-service -> notification-service" in out
    assert out.count("RESULT: OK") == 2


def test_each_service_answers_help() -> None:
    for name in ("orders", "shipping", "notifications", "audit"):
        result = subprocess.run(
            [sys.executable, "-m", f"examples.{name}", "--help"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert "--bootstrap" in result.stdout
