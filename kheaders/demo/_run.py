"""``kheaders demo``: order and shipping services over a real broker, audited, then Spark.

This is the one place in ``kheaders`` that composes the ready interceptors (by dotted name,
through the services in :mod:`kheaders.demo._services`) and imports the ``interceptors``
package; it is loaded only when the ``demo`` command runs.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from confluent_kafka import Message
from opentelemetry import trace

from kheaders.broker._finder import EmbeddedBroker, create_topic
from kheaders.broker._net import wait_for_broker
from kheaders.demo._audit import AuditReport, audit, audit_record, format_audit
from kheaders.demo._metrics import setup_metrics
from kheaders.demo._notify import NOTIFICATIONS_TOPIC, run_notifications
from kheaders.demo._services import (
    ORDERS_CLIENT_ID,
    SHIPPING_CLIENT_ID,
    VERSION_HEADER,
    ServiceStats,
    order_key,
    produce_orders,
    read_topics,
    run_shipping,
    setup_tracing,
)


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """Settings of one demo run (see ``kheaders demo --help``)."""

    bootstrap: str | None = None
    orders: int = 200
    partitions: int = 3
    spark: bool = True
    timeout: float = 60.0
    show: int = 10
    drop: int = 0  # fault injection (tests): shipping skips this many orders


@dataclass(frozen=True, slots=True)
class DemoTopics:
    """The topics of one run: orders, shipments, notifications (the async service's), and the
    compacted orders Spark writes."""

    orders: str
    shipments: str
    compacted: str
    notifications: str = NOTIFICATIONS_TOPIC

    @classmethod
    def for_run(cls, suffix: str) -> DemoTopics:
        """Topic names ending in ``suffix`` (empty on a fresh embedded broker)."""
        return cls(
            f"orders{suffix}",
            f"shipments{suffix}",
            f"orders.compacted{suffix}",
            f"{NOTIFICATIONS_TOPIC}{suffix}",
        )


class _Service(threading.Thread):
    """A service on a thread, keeping its result or its exception."""

    def __init__(self, name: str, target: Callable[[], ServiceStats]) -> None:
        super().__init__(name=name, daemon=True)
        self._target_fn = target
        self.result: ServiceStats | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self._target_fn()
        except BaseException as exc:  # reported by the demo, never lost with the thread
            self.error = exc


def run_services(
    bootstrap: str,
    topics: DemoTopics,
    options: DemoOptions,
    provider: trace.TracerProvider,
    out: TextIO,
) -> tuple[AuditReport, list[str], AuditReport]:
    """Run the order, shipping and (asyncio) notification services on threads, then audit.

    Returns the audit of orders -> shipments, the services' own problems (an exception, a
    thread that did not finish, failed deliveries), and the audit of the sync -> async hop,
    shipments -> notifications.
    """
    for topic in (topics.orders, topics.shipments, topics.notifications):
        create_topic(bootstrap, topic, partitions=options.partitions)
    dropped: list[int] = []

    def skip(_msg: Message) -> bool:
        if len(dropped) < options.drop:
            dropped.append(1)
            return True
        return False

    group = f"shipping-{uuid.uuid4().hex[:8]}"
    assigned = threading.Event()
    shipping = _Service(
        "shipping",
        lambda: run_shipping(
            bootstrap,
            expected=options.orders,
            timeout=options.timeout,
            orders_topic=topics.orders,
            shipments_topic=topics.shipments,
            group_id=group,
            tracer_provider=provider,
            skip=skip if options.drop else None,
            ready=assigned,
        ),
    )
    orders = _Service(
        "orders",
        lambda: produce_orders(
            bootstrap,
            options.orders,
            topic=topics.orders,
            tracer_provider=provider,
            timeout=options.timeout,
        ),
    )
    shipped = options.orders - options.drop
    notify_ready = threading.Event()
    notifications = _Service(
        "notifications (asyncio)",
        lambda: asyncio.run(
            run_notifications(
                bootstrap,
                expected=shipped,
                timeout=options.timeout,
                shipments_topic=topics.shipments,
                notifications_topic=topics.notifications,
                group_id=f"notifications-{uuid.uuid4().hex[:8]}",
                tracer_provider=provider,
                ready=notify_ready,
            )
        ),
    )
    shipping.start()
    notifications.start()
    # Orders start once the consumers own their partitions: hop latency is not a group join.
    assigned.wait(min(options.timeout, 30.0))
    notify_ready.wait(min(options.timeout, 30.0))
    orders.start()
    problems: list[str] = []
    for service in (orders, shipping, notifications):
        service.join(options.timeout + 30)
        status = service.error or service.result or "did not finish"
        print(f"{service.name} service: {status}", file=out)
        if service.result is None or service.result.failed:
            problems.append(f"{service.name} service: {status!r}")
    rows = read_topics(
        bootstrap,
        {
            topics.orders: options.orders,
            topics.shipments: options.orders,
            topics.notifications: options.orders,
        },
        timeout=options.timeout,
        idle_timeout=3.0,
    )
    audited = [audit_record(m) for m in rows]
    report = audit(audited, topics.orders, topics.shipments, options.orders)
    hop = audit(audited, topics.shipments, topics.notifications, shipped)
    return report, problems, hop


def run_spark(bootstrap: str, topics: DemoTopics, report: AuditReport, out: TextIO) -> list[str]:
    """The Spark pipeline over the demo's topics; returns the problems found (empty: agreed).

    Compacts ``orders`` by the ``version`` header into the compacted topic, reads it back
    (every key's latest event must be the last one produced), and builds the trace report
    over orders and shipments, which must match the audit's complete traces.
    """
    from pyspark.sql import SparkSession

    from kheaders.spark import prepare_local_spark
    from kheaders.spark._pipeline import format_report, read_topic, run_pipeline, trace_report

    prepare_local_spark("local[2]")
    create_topic(bootstrap, topics.compacted, partitions=1)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("kheaders-demo")
        .config("spark.driver.bindAddress", "127.0.0.1")  # loopback only, like the broker
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    problems: list[str] = []
    try:
        result = run_pipeline(
            spark,
            bootstrap=bootstrap,
            topic=topics.orders,
            strategy="header",
            header=VERSION_HEADER,
            output_topic=topics.compacted,
        )
        print(format_report(result).splitlines()[0], file=out)
        print(f"compacted state written to topic {topics.compacted}", file=out)
        rows = trace_report(read_topic(spark, bootstrap, f"{topics.orders},{topics.shipments}"))
        traces = rows.collect()
    finally:
        spark.stop()
    expected_keys = (report.records_in + 1) // 2
    if result.keys != expected_keys or result.state_records != expected_keys:
        problems.append(
            f"spark: {result.keys} keys / {result.state_records} state records,"
            f" expected {expected_keys}"
        )
    problems.extend(_check_compacted(bootstrap, topics.compacted, report.records_in))
    two_hops = [t for t in traces if t["hops"] == 2]
    clients = {ORDERS_CLIENT_ID, SHIPPING_CLIENT_ID}
    joined = [t for t in two_hops if set(t["client_ids"]) == clients]
    print(
        f"spark trace report over {topics.orders},{topics.shipments}: {len(traces)} traces,"
        f" {len(joined)} with 2 hops ({ORDERS_CLIENT_ID} -> {SHIPPING_CLIENT_ID})",
        file=out,
    )
    if len(joined) != report.complete or len(traces) != len(report.traces):
        problems.append(
            f"spark trace report ({len(joined)} complete of {len(traces)}) disagrees with the"
            f" audit ({report.complete} complete of {len(report.traces)})"
        )
    return problems


def _check_compacted(bootstrap: str, topic: str, events: int) -> list[str]:
    """Every order key of the compacted topic once, holding that order's last event."""
    keys = (events + 1) // 2
    rows = read_topics(bootstrap, {topic: keys}, timeout=30.0, idle_timeout=3.0)
    latest: dict[str, int] = {}
    problems: list[str] = []
    for msg in rows:
        key, raw = msg.key(), msg.value()
        order = json.loads(raw) if isinstance(raw, bytes) else None
        if not isinstance(order, dict) or not isinstance(key, bytes):
            problems.append(f"compacted record at offset {msg.offset()} is not an order")
            continue
        latest[key.decode()] = int(order["event"])
    if len(latest) != keys or len(rows) != keys:
        problems.append(f"compacted topic: {len(rows)} records for {len(latest)} keys, not {keys}")
    for index in range(keys):
        want = min(2 * index + 1, events - 1)
        got = latest.get(order_key(2 * index))
        if got is not None and got != want:
            problems.append(f"compaction kept event {got} for {order_key(2 * index)}, not {want}")
            break
    return problems


def run_demo(options: DemoOptions, out: TextIO) -> int:
    """The whole demo; the exit code: 0 when every record arrived and every trace is whole."""
    provider = setup_tracing("kheaders-demo")
    metrics = setup_metrics("kheaders-demo")
    broker: EmbeddedBroker | None = None
    summary: list[str] = []
    if options.bootstrap:
        wait_for_broker(options.bootstrap, 30.0)
        bootstrap = options.bootstrap
        topics = DemoTopics.for_run(f"-{uuid.uuid4().hex[:8]}")
        print(f"broker: {bootstrap} (given)", file=out)
    else:
        broker = EmbeddedBroker().start()
        bootstrap = broker.bootstrap
        topics = DemoTopics.for_run("")
        print(f"broker: {bootstrap} (embedded Tansu, memory storage)", file=out)
    try:
        print(
            f"services: {options.orders} orders -> {topics.orders} -> {topics.shipments}"
            f" -> {topics.notifications} (asyncio)",
            file=out,
        )
        before = metrics.snapshot() if metrics is not None else None
        report, problems, hop = run_services(bootstrap, topics, options, provider, out)
        if metrics is not None and before is not None:
            summary = metrics.summary(
                before,
                {topics.orders: ORDERS_CLIENT_ID, topics.shipments: SHIPPING_CLIENT_ID},
                {topics.orders: SHIPPING_CLIENT_ID},
            )
        print(format_audit(report, options.show), file=out)
        print(format_audit(hop, 0), file=out)  # the sync -> asyncio hop: its summary
        for problem in problems:
            print(f"PROBLEM: {problem}", file=out)
        problems.extend(report.problems)
        problems.extend(hop.problems)
        if options.spark:
            try:
                import pyspark  # noqa: F401 (only probing)
            except ImportError:
                print(
                    "spark pipeline skipped: pyspark is not installed"
                    " (pip install 'kheaders[spark]'; --no-spark silences this)",
                    file=out,
                )
            else:
                spark_problems = run_spark(bootstrap, topics, report, out)
                problems.extend(spark_problems)
                for problem in spark_problems:
                    print(f"PROBLEM: {problem}", file=out)
                print("SPARK: OK" if not spark_problems else "SPARK: FAILED", file=out)
        else:
            print("spark pipeline skipped (--no-spark)", file=out)
    finally:
        if broker is not None:
            broker.stop()
        provider.shutdown()
        if metrics is not None:
            metrics.provider.force_flush()  # to the OTLP collector when one is configured
    for line in summary or ["metrics: another MeterProvider was installed; no summary"]:
        print(line, file=out)
    print("demo: OK" if not problems else f"demo: FAILED ({len(problems)} problems)", file=out)
    return 0 if not problems else 1
