"""kheaders benchmarks: ratios against raw confluent-kafka and OpenTelemetry's instrumentation.

Run everything with ``python -m bench`` (``--quick`` for a small run); see bench/README.md.
"""
