"""MetricsProducerInterceptor times records by the latency their report carries
(``RecordMetadata.latency``) and keeps nothing per record: a producer with it alone keeps
the lean acknowledging path (one report object per record in flight)."""

from __future__ import annotations

import gc

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from kheaders import Headers, Producer, RecordMetadata
from kheaders.interceptors.metrics import (
    OPERATION_DURATION,
    SENT_MESSAGES,
    MetricsProducerInterceptor,
)
from tests.interceptors.metrics_helpers import collect

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}


def test_the_duration_is_the_latency_the_report_carries(
    meter_provider: MeterProvider, reader: InMemoryMetricReader
) -> None:
    icpt = MetricsProducerInterceptor(meter_provider=meter_provider, max_durations_per_second=0)
    ack = icpt.on_acknowledgement
    ack(RecordMetadata("t", 0, 5, latency=0.25), None, Headers())
    ack(RecordMetadata("t", 0, 6, latency=0.5), None, Headers())
    ack(RecordMetadata("t", 0, 7), None, Headers())  # no latency known: counted, not timed
    metrics = collect(reader)
    assert metrics[SENT_MESSAGES].value(messaging__destination__partition__id="0") == 3
    point = metrics[OPERATION_DURATION].value(messaging__destination__partition__id="0")
    assert (point.count, point.sum, point.min, point.max) == (2, 0.75, 0.25, 0.5)


def test_it_has_no_send_hook_and_keeps_nothing_per_record(
    meter_provider: MeterProvider, reader: InMemoryMetricReader
) -> None:
    icpt = MetricsProducerInterceptor(meter_provider=meter_provider, max_durations_per_second=0)
    assert icpt.recording
    assert not hasattr(icpt, "on_send")
    producer = Producer(UNREACHABLE, interceptors=[icpt])
    assert not producer.interceptors.on_send
    lists = [[("traceparent", b"%055d" % i), ("client.id", b"svc")] for i in range(64)]
    n = 2000
    gc.collect()
    before = len(gc.get_objects())
    for i in range(n):
        producer.produce("t", b"v", headers=lists[i % 64])
    gc.collect()
    assert (len(gc.get_objects()) - before) / n <= 1.01  # the report alone
    producer.purge()
    producer.poll(0)
    producer.close(0)
    metrics = collect(reader)
    assert metrics[SENT_MESSAGES].value(error__type="_PURGE_QUEUE") == n
    purged = metrics[OPERATION_DURATION].value(error__type="_PURGE_QUEUE")
    assert purged.count == n  # librdkafka measures failed deliveries too
    assert purged.min >= 0
