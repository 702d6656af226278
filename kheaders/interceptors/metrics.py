"""OpenTelemetry metrics for Kafka clients: the messaging conventions' instruments, and
librdkafka's statistics as observable instruments.

- :class:`MetricsProducerInterceptor`: ``messaging.client.sent.messages`` and
  ``messaging.client.operation.duration`` (``send``: the delivery latency).
- :class:`MetricsConsumerInterceptor`: ``messaging.client.consumed.messages``;
  :func:`process_metrics` / :meth:`MetricsConsumerInterceptor.process`:
  ``messaging.process.duration``.
- :func:`with_statistics` / :class:`StatisticsBridge`: librdkafka's ``stats_cb`` as producer
  queue depth, per-partition consumer lag and per-broker round-trip time.

Needs only ``opentelemetry-api``; values are recorded when an SDK MeterProvider is installed
(globally, before the clients are built, or passed as ``meter_provider``). The instrument
list, with units and attributes, is in docs/interceptors.md.
"""

from __future__ import annotations

from kheaders.interceptors import _public
from kheaders.interceptors._metrics_common import (
    CONSUMED_MESSAGES,
    DURATION_BUCKETS,
    MAX_PENDING_KEY,
    MAX_RATE_KEY,
    OPERATION_DURATION,
    PROCESS_DURATION,
    SENT_MESSAGES,
)
from kheaders.interceptors._metrics_consumer import MetricsConsumerInterceptor, process_metrics
from kheaders.interceptors._metrics_producer import MetricsProducerInterceptor
from kheaders.interceptors._metrics_stats import (
    BROKER_RTT,
    BROKER_RTT_P99,
    CONSUMER_LAG,
    CONSUMER_LAG_STORED,
    QUEUE_BYTES,
    QUEUE_MESSAGES,
    Statistics,
    StatisticsBridge,
    with_statistics,
)

__all__ = [
    "BROKER_RTT",
    "BROKER_RTT_P99",
    "CONSUMED_MESSAGES",
    "CONSUMER_LAG",
    "CONSUMER_LAG_STORED",
    "DURATION_BUCKETS",
    "MAX_PENDING_KEY",
    "MAX_RATE_KEY",
    "OPERATION_DURATION",
    "PROCESS_DURATION",
    "QUEUE_BYTES",
    "QUEUE_MESSAGES",
    "SENT_MESSAGES",
    "MetricsConsumerInterceptor",
    "MetricsProducerInterceptor",
    "Statistics",
    "StatisticsBridge",
    "process_metrics",
    "with_statistics",
]
_public.claim(__name__, globals())
