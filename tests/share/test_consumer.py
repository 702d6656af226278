"""kheaders.ShareConsumer on the Apache Kafka broker: headers, deserializers, interceptors,
tracing, the broker's delivery count and explicit acknowledgement."""

from __future__ import annotations

from collections.abc import Callable

import confluent_kafka
import pytest
from confluent_kafka import AcknowledgeType, Message, TopicPartition
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricsData
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kheaders import (
    ConfigurationError,
    DeserializationError,
    Headers,
    ReadOnlyHeadersError,
    ShareConsumer,
    StringDeserializer,
    wrap_share_consumer,
)
from kheaders.interceptors.metrics import MetricsConsumerInterceptor
from kheaders.interceptors.tracing import TracingConsumerInterceptor
from tests.share.conftest import poll_until, produce

pytestmark = pytest.mark.integration

EXPLICIT = {"share.acknowledgement.mode": "explicit"}


def _config(bootstrap: str, group: str, **extra: object) -> dict[str, object]:
    return {"bootstrap.servers": bootstrap, "group.id": group, **EXPLICIT, **extra}


def _accept_all(consumer: ShareConsumer) -> Callable[[list[Message]], None]:
    def ack(batch: list[Message]) -> None:
        for msg in batch:
            consumer.acknowledge(msg, AcknowledgeType.ACCEPT)
        consumer.commit_sync()

    return ack


def test_headers_duplicates_and_null_values_arrive_read_only_with_decoded_data(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    sent = [("trace", b"a"), ("dup", b"1"), ("dup", b"2"), ("empty", None)]
    produce(bootstrap, topic, [(b"k", b"hello", sent), (None, None, [])])
    with ShareConsumer(
        _config(bootstrap, share_group()), value_deserializer=StringDeserializer()
    ) as consumer:
        consumer.subscribe([topic])
        got = poll_until(consumer, lambda s: len(s) >= 2, on_batch=_accept_all(consumer))
    first, second = sorted(got, key=lambda m: m.offset() or 0)
    headers = first.headers()
    assert isinstance(headers, Headers)
    assert [(h.key, h.value) for h in headers] == sent
    assert headers.values("dup") == [b"1", b"2"]
    with pytest.raises(ReadOnlyHeadersError):
        headers.add("x", b"y")
    assert first.key() == b"k"
    assert first.value() == "hello"
    assert first.delivery_count() == 1
    assert list(second.headers()) == []
    assert second.value() is None


def test_release_redelivers_with_a_growing_delivery_count_and_reject_never_does(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    produce(bootstrap, topic, [(None, b"reject-me", []), (None, b"release-me", [])])
    counts: list[tuple[bytes, int | None]] = []
    with ShareConsumer(_config(bootstrap, share_group())) as consumer:
        consumer.subscribe([topic])

        def ack(batch: list[Message]) -> None:
            for msg in batch:
                counts.append((msg.value() or b"", msg.delivery_count()))
                if msg.value() == b"reject-me":
                    consumer.acknowledge(msg, AcknowledgeType.REJECT)
                elif msg.value() == b"release-me" and (msg.delivery_count() or 0) < 3:
                    consumer.acknowledge(msg, AcknowledgeType.RELEASE)
                else:
                    consumer.acknowledge(msg, AcknowledgeType.ACCEPT)
            consumer.commit_sync()

        poll_until(consumer, lambda s: (b"release-me", 3) in counts, on_batch=ack)
        produce(bootstrap, topic, [(None, b"sentinel", [])])
        poll_until(consumer, lambda s: any(m.value() == b"sentinel" for m in s), on_batch=ack)
    assert [c for v, c in counts if v == b"release-me"] == [1, 2, 3]
    assert [c for v, c in counts if v == b"reject-me"] == [1]  # rejected: never again


def test_interceptors_see_each_batch_and_the_acknowledged_offsets(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    class Recorder:
        def __init__(self) -> None:
            self.consumed: list[int] = []
            self.committed: list[tuple[str, int, int]] = []

        def on_consume(self, messages: list[Message]) -> list[Message]:
            self.consumed.extend(m.offset() or 0 for m in messages)
            return messages

        def on_commit(self, offsets: list[TopicPartition]) -> None:
            self.committed.extend((tp.topic, tp.partition, tp.offset) for tp in offsets)

    recorder = Recorder()
    produce(bootstrap, topic, [(None, b"%d" % i, []) for i in range(3)])
    with ShareConsumer(_config(bootstrap, share_group()), interceptors=[recorder]) as consumer:
        consumer.subscribe([topic])
        poll_until(consumer, lambda s: len(s) >= 3, on_batch=_accept_all(consumer))
    assert sorted(recorder.consumed) == [0, 1, 2]
    assert sorted(recorder.committed) == [(topic, 0, 0), (topic, 0, 1), (topic, 0, 2)]


def test_tracing_interceptor_records_a_poll_span_linked_to_the_producer_context(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    produce(bootstrap, topic, [(None, b"v", [("traceparent", parent.encode())])])
    tracing = TracingConsumerInterceptor(tracer_provider=provider)
    with ShareConsumer(_config(bootstrap, share_group()), interceptors=[tracing]) as consumer:
        consumer.subscribe([topic])
        poll_until(consumer, lambda s: len(s) >= 1, on_batch=_accept_all(consumer))
    provider.shutdown()
    spans = [s for s in exporter.get_finished_spans() if s.name == f"poll {topic}"]
    assert len(spans) == 1
    assert [f"{link.context.trace_id:032x}" for link in spans[0].links] == [parent.split("-")[1]]


def test_metrics_interceptor_counts_the_records_each_member_consumed(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    produce(bootstrap, topic, [(None, b"%d" % i, []) for i in range(4)])
    group = share_group()
    config = {
        **_config(bootstrap, group),
        "interceptor.classes": [MetricsConsumerInterceptor(meter_provider=provider)],
    }
    with ShareConsumer(config) as consumer:
        consumer.interceptors.interceptors[0].configure(config)  # (objects given are not)
        consumer.subscribe([topic])
        poll_until(consumer, lambda s: len(s) >= 4, on_batch=_accept_all(consumer))
    counted = [
        (dict(point.attributes or {}), point.value)
        for rm in (reader.get_metrics_data() or MetricsData([])).resource_metrics
        for sm in rm.scope_metrics
        for metric in sm.metrics
        if metric.name == "messaging.client.consumed.messages"
        for point in metric.data.data_points
    ]
    provider.shutdown()
    ((attributes, value),) = counted
    assert value == 4
    assert attributes["messaging.destination.name"] == topic
    assert attributes["messaging.consumer.group.name"] == group


def test_a_record_that_fails_to_deserialize_is_raised_with_its_delivery_count_and_can_be_rejected(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    produce(bootstrap, topic, [(None, b"\xff\xfe", [("h", b"1")]), (None, b"fine", [])])
    failures: list[DeserializationError] = []
    with ShareConsumer(
        _config(bootstrap, share_group()), value_deserializer=StringDeserializer()
    ) as consumer:
        consumer.subscribe([topic])

        def poll_all(seen: list[Message]) -> bool:
            return any(m.value() == "fine" for m in seen) and bool(failures)

        good: list[Message] = []
        while not poll_all(good):
            try:
                batch = list(consumer.poll(0.5))
            except DeserializationError as exc:
                failures.append(exc)
                consumer.acknowledge(exc.message, AcknowledgeType.REJECT)
                continue
            for msg in batch:
                consumer.acknowledge(msg, AcknowledgeType.ACCEPT)
                good.append(msg)
            if batch:
                consumer.commit_sync()
    (failure,) = failures
    assert failure.message.value() == b"\xff\xfe"  # the consumed bytes, untouched
    assert failure.message.delivery_count() == 1
    assert failure.message.headers().values("h") == [b"1"]


def test_a_record_an_interceptor_leaves_out_is_accepted_in_explicit_mode(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    class SkipNoise:
        def on_consume(self, messages: list[Message]) -> list[Message]:
            return [m for m in messages if m.value() != b"noise"]

    produce(bootstrap, topic, [(None, b"noise", []), (None, b"signal", [])])
    group = share_group()
    with ShareConsumer(_config(bootstrap, group), interceptors=[SkipNoise()]) as consumer:
        consumer.subscribe([topic])
        got = poll_until(consumer, lambda s: len(s) >= 1, on_batch=_accept_all(consumer))
        produce(bootstrap, topic, [(None, b"sentinel", [])])
        got += poll_until(
            consumer,
            lambda s: any(m.value() == b"sentinel" for m in s),
            on_batch=_accept_all(consumer),
        )
    assert [m.value() for m in got] == [b"signal", b"sentinel"]  # noise: accepted, not redelivered


def test_wrapping_an_existing_share_consumer_owns_it(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    produce(bootstrap, topic, [(None, b"42", [("n", b"1")])])
    raw = confluent_kafka.ShareConsumer(_config(bootstrap, share_group()))
    consumer = wrap_share_consumer(raw, value_deserializer=StringDeserializer(), config=EXPLICIT)
    with consumer:
        consumer.subscribe([topic])
        (msg,) = poll_until(consumer, lambda s: len(s) >= 1, on_batch=_accept_all(consumer))
    assert msg.value() == "42"
    assert msg.headers().values("n") == [b"1"]
    with pytest.raises(RuntimeError):
        raw.poll(0)  # closed with the wrapper


def test_bad_settings_are_refused_at_construction_naming_the_key() -> None:
    with pytest.raises(ConfigurationError, match=r"share\.acknowledgement\.mode"):
        ShareConsumer({"group.id": "g", "share.acknowledgement.mode": "manual"})
    with pytest.raises(ConfigurationError, match=r"key\.serializer"):
        ShareConsumer({"group.id": "g", "key.serializer": "kheaders.StringSerializer"})
    with pytest.raises(TypeError, match="ShareConsumer"):
        wrap_share_consumer(object())  # type: ignore[arg-type]
