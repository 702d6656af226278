"""Ready-made kheaders interceptors, named in config or passed as objects.

- ``interceptors.tracing``: TracingProducerInterceptor, TracingConsumerInterceptor,
  extract, process_span (OpenTelemetry, strict W3C Trace Context)
- ``interceptors.client_id``: ClientIdInterceptor
- ``interceptors.message_id``: MessageIdInterceptor (a UUIDv7 message id at first produce)
- ``interceptors.correlation``: CorrelationIdInterceptor, correlation_id, correlation_scope
- ``interceptors.logging``: LoggingInterceptor (structlog, redacted headers)
- ``interceptors.metrics``: MetricsProducerInterceptor, MetricsConsumerInterceptor,
  process_metrics, with_statistics, StatisticsBridge (OpenTelemetry metrics)

See docs/interceptors.md.
"""
