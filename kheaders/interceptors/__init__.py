"""Ready-made kheaders interceptors, named in config or passed as objects.

- ``kheaders.interceptors.tracing``: TracingProducerInterceptor, TracingConsumerInterceptor,
  extract, process_span (OpenTelemetry, strict W3C Trace Context)
- ``kheaders.interceptors.client_id``: ClientIdInterceptor
- ``kheaders.interceptors.message_id``: MessageIdInterceptor (a UUIDv7 message id at first produce)
- ``kheaders.interceptors.correlation``: CorrelationIdInterceptor, correlation_id, correlation_scope
- ``kheaders.interceptors.logging``: LoggingInterceptor (structlog, redacted headers)
- ``kheaders.interceptors.metrics``: MetricsProducerInterceptor, MetricsConsumerInterceptor,
  process_metrics, with_statistics, StatisticsBridge (OpenTelemetry metrics)

See docs/interceptors.md.
"""
