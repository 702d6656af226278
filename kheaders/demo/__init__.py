"""The demo's services, importable: what ``examples/`` and ``kheaders demo`` run.

Services that talk only through Kafka: :func:`produce_orders` (order service),
:func:`run_shipping` (shipping service, one trace across both hops),
:func:`run_notifications` (an asyncio service on ``kheaders.aio``: the trace's third hop)
and :func:`read_topics` + :func:`audit` (the audit). They need ``opentelemetry-sdk`` for
spans (extra ``kheaders[demo]``) and the ``interceptors`` package, which they name in their
client configs.
``import kheaders`` does not import this module.
"""

from kheaders import _public
from kheaders.demo._audit import (
    AuditRecord,
    AuditReport,
    TraceHops,
    audit,
    audit_record,
    format_audit,
)
from kheaders.demo._metrics import DemoMetrics, setup_metrics
from kheaders.demo._notify import NOTIFICATION_CLIENT_ID, NOTIFICATIONS_TOPIC, run_notifications
from kheaders.demo._services import (
    ORDERS_CLIENT_ID,
    ORDERS_TOPIC,
    SHIPMENTS_TOPIC,
    SHIPPING_CLIENT_ID,
    VERSION_HEADER,
    ServiceStats,
    bootstrap_from_env,
    order_key,
    produce_orders,
    read_topics,
    run_shipping,
    setup_tracing,
)

__all__ = [
    "NOTIFICATIONS_TOPIC",
    "NOTIFICATION_CLIENT_ID",
    "ORDERS_CLIENT_ID",
    "ORDERS_TOPIC",
    "SHIPMENTS_TOPIC",
    "SHIPPING_CLIENT_ID",
    "VERSION_HEADER",
    "AuditRecord",
    "AuditReport",
    "DemoMetrics",
    "ServiceStats",
    "TraceHops",
    "audit",
    "audit_record",
    "bootstrap_from_env",
    "format_audit",
    "order_key",
    "produce_orders",
    "read_topics",
    "run_notifications",
    "run_shipping",
    "setup_metrics",
    "setup_tracing",
]
_public.claim(__name__, globals())
