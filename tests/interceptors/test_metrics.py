"""The metrics interceptors on the real broker: every instrument's name, unit, attributes and
values against the records actually sent and consumed, failures included."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import Message, TopicPartition
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.semconv._incubating.metrics import messaging_metrics as semconv

from kheaders import ConfigurationError, Consumer, HeaderLimitError, HeaderLimits, Producer
from kheaders.interceptors.metrics import (
    CONSUMED_MESSAGES,
    OPERATION_DURATION,
    PROCESS_DURATION,
    SENT_MESSAGES,
    MetricsConsumerInterceptor,
    MetricsProducerInterceptor,
    process_metrics,
)
from tests.interceptors.metrics_helpers import collect

pytestmark = pytest.mark.integration


def test_instrument_names_are_the_pinned_semantic_conventions() -> None:
    assert semconv.MESSAGING_CLIENT_SENT_MESSAGES == SENT_MESSAGES
    assert semconv.MESSAGING_CLIENT_CONSUMED_MESSAGES == CONSUMED_MESSAGES
    assert semconv.MESSAGING_CLIENT_OPERATION_DURATION == OPERATION_DURATION
    assert semconv.MESSAGING_PROCESS_DURATION == PROCESS_DURATION


def _server(bootstrap: str) -> tuple[str, int]:
    host, _, port = bootstrap.split(",", maxsplit=1)[0].rpartition(":")
    return host, int(port)


def test_producer_counts_and_times_every_record_by_partition_and_error(
    bootstrap: str,
    topic_factory: Callable[..., str],
    meter_provider: MeterProvider,
    reader: InMemoryMetricReader,
) -> None:
    topic = topic_factory(partitions=2)
    icpt = MetricsProducerInterceptor(meter_provider=meter_provider)
    config = {"bootstrap.servers": bootstrap, "linger.ms": 5}
    icpt.configure(config)
    producer = Producer(config, interceptors=[icpt], limits=HeaderLimits(max_value_bytes=8))
    delivered: list[Message] = []
    for i in range(5):
        producer.produce(
            topic, b"v%d" % i, partition=i % 2, on_delivery=lambda _e, m: delivered.append(m)
        )
    with pytest.raises(HeaderLimitError):
        producer.produce(topic, b"too big", headers=[("blob", b"0123456789")])
    assert producer.flush(30) == 0
    # a delivery failure from librdkafka: records purged from the queue before sending
    slow = Producer({**config, "linger.ms": 60_000}, interceptors=[icpt])
    for _ in range(2):
        slow.produce(topic, b"never", partition=0)
    slow.purge(in_queue=True, in_flight=False)
    slow.poll(0.5)
    slow.close(0)
    producer.close()

    host, port = _server(bootstrap)
    metrics = collect(reader)
    sent = metrics[SENT_MESSAGES]
    assert sent.unit == "{message}"
    base = {
        "messaging.system": "kafka",
        "messaging.operation.name": "send",
        "messaging.destination.name": topic,
        "server.address": host,
        "server.port": port,
    }
    ok = [a for a in sent.attributes() if "error.type" not in a]
    assert sorted(ok, key=str) == sorted(
        [{**base, "messaging.destination.partition.id": p} for p in ("0", "1")], key=str
    )
    assert sent.value(messaging__destination__partition__id="0", error__type=None) == 3
    assert sent.value(messaging__destination__partition__id="1", error__type=None) == 2
    assert len(delivered) == 5
    assert all(m.error() is None for m in delivered)
    refused = sent.value(error__type="HeaderLimitError")
    assert refused == 1
    purged = [n for a, n in sent.points if a.get("error.type") == "_PURGE_QUEUE"]
    assert sum(purged) == 2

    duration = metrics[OPERATION_DURATION]
    assert duration.unit == "s"
    for partition, n in (("0", 3), ("1", 2)):
        point = duration.value(messaging__destination__partition__id=partition, error__type=None)
        assert point.count == n
        assert 0 < point.min <= point.max < 30
    failed = duration.value(error__type="HeaderLimitError")
    assert failed.count == 1
    assert {a["messaging.operation.type"] for a in duration.attributes()} == {"send"}
    assert sum(p.count for _, p in duration.points) == 8  # every record of this small run


def test_no_meter_provider_means_no_recording_and_no_acknowledgement_hook() -> None:
    from opentelemetry.metrics import NoOpMeterProvider

    icpt = MetricsProducerInterceptor(meter_provider=NoOpMeterProvider())
    assert not icpt.recording
    assert not hasattr(icpt, "on_send")
    assert not hasattr(icpt, "on_acknowledgement")
    producer = Producer({"bootstrap.servers": "127.0.0.1:9"}, interceptors=[icpt])
    # the chain leaves the idle interceptor out: nothing runs per record
    assert not producer.interceptors.on_send
    assert not producer.interceptors.on_acknowledgement
    producer.close(0)
    consumer_icpt = MetricsConsumerInterceptor(meter_provider=NoOpMeterProvider())
    assert not consumer_icpt.recording
    consumer = Consumer(
        {"bootstrap.servers": "127.0.0.1:9", "group.id": "g"}, interceptors=[consumer_icpt]
    )
    assert not consumer.interceptors.on_consume
    consumer.close()


def test_consumer_counts_consumed_records_and_times_processing_with_errors(
    bootstrap: str,
    topic_factory: Callable[..., str],
    meter_provider: MeterProvider,
    reader: InMemoryMetricReader,
) -> None:
    topic = topic_factory(partitions=2)
    with Producer({"bootstrap.servers": bootstrap}) as producer:
        for i in range(5):
            producer.produce(topic, b"v%d" % i, partition=i % 2)
        producer.flush(30)
    group = f"g-{topic}"
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "interceptor.classes": [MetricsConsumerInterceptor(meter_provider=meter_provider)],
    }
    consumer = Consumer(config)
    icpt = consumer.interceptors.interceptors[0]
    assert isinstance(icpt, MetricsConsumerInterceptor)
    icpt.configure(config)  # objects passed in are not configured by kheaders
    consumer.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
    got: list[Message] = []
    deadline = time.monotonic() + 30
    while len(got) < 5 and time.monotonic() < deadline:
        got.extend(m for m in consumer.consume(10, 0.5) if m.error() is None)
    assert len(got) == 5
    failures = 0
    for msg in got:
        try:
            with icpt.process(msg):
                if msg.value() == b"v3":
                    raise ValueError("cannot process")
        except ValueError:
            failures += 1
    assert failures == 1
    consumer.close()

    host, port = _server(bootstrap)
    metrics = collect(reader)
    consumed = metrics[CONSUMED_MESSAGES]
    assert consumed.unit == "{message}"
    base = {
        "messaging.system": "kafka",
        "messaging.operation.name": "poll",
        "messaging.destination.name": topic,
        "messaging.consumer.group.name": group,
        "server.address": host,
        "server.port": port,
    }
    assert sorted(consumed.attributes(), key=str) == sorted(
        [{**base, "messaging.destination.partition.id": p} for p in ("0", "1")], key=str
    )
    assert consumed.value(messaging__destination__partition__id="0") == 3
    assert consumed.value(messaging__destination__partition__id="1") == 2

    process = metrics[PROCESS_DURATION]
    assert process.unit == "s"
    assert process.value(messaging__destination__partition__id="0").count == 3
    assert process.value(messaging__destination__partition__id="1", error__type=None).count == 1
    failed = process.value(error__type="ValueError")
    assert failed.count == 1
    attrs = next(a for a in process.attributes() if "error.type" in a)
    assert attrs == {
        **base,
        "messaging.operation.name": "process",
        "messaging.operation.type": "process",
        "messaging.destination.partition.id": "1",
        "error.type": "ValueError",
    }


def test_interceptors_named_in_config_use_the_global_provider_and_read_their_settings(
    bootstrap: str, topic: str, reader: InMemoryMetricReader
) -> None:
    """By name in ``interceptor.classes``: built with no arguments, then ``configure``d."""
    from kheaders.interceptors._metrics_common import is_noop

    config = {
        "bootstrap.servers": bootstrap,
        "interceptor.classes": "kheaders.interceptors.metrics.MetricsProducerInterceptor",
        "kheaders.metrics.duration.max.per.second": "7",
        "kheaders.metrics.max.pending": "9",
    }
    producer = Producer(config)
    icpt = producer.interceptors.interceptors[0]
    assert isinstance(icpt, MetricsProducerInterceptor)
    # the global provider decides (the API's proxy in this process unless someone set one)
    assert icpt.recording is not is_noop(None)
    assert icpt._sampler._limit == 7
    assert icpt._max_pending == 9
    producer.produce(topic, b"v")
    assert producer.flush(30) == 0
    producer.close()
    assert SENT_MESSAGES not in collect(reader)  # this test's provider was never given
    with pytest.raises(ConfigurationError, match=r"kheaders\.metrics\.max\.pending"):
        Producer({**config, "kheaders.metrics.max.pending": "0"})


def test_process_metrics_without_an_interceptor(
    meter_provider: MeterProvider, reader: InMemoryMetricReader
) -> None:
    msg = Message(topic="orders", partition=2, offset=7, key=b"k", value=b"v")
    with process_metrics(msg, consumer_group="billing", meter_provider=meter_provider):
        pass
    point = collect(reader)[PROCESS_DURATION].value(messaging__destination__name="orders")
    assert point.count == 1
    assert collect(reader)[PROCESS_DURATION].attributes() == [
        {
            "messaging.system": "kafka",
            "messaging.operation.name": "process",
            "messaging.operation.type": "process",
            "messaging.destination.name": "orders",
            "messaging.destination.partition.id": "2",
            "messaging.consumer.group.name": "billing",
        }
    ]


def test_two_clients_with_equal_attributes_sum_and_a_closed_clients_counts_stay(
    meter_provider: MeterProvider, reader: InMemoryMetricReader
) -> None:
    from kheaders import Headers, RecordMetadata

    config = {"bootstrap.servers": "broker-a:9092"}
    first, second = (MetricsProducerInterceptor(meter_provider=meter_provider) for _ in "ab")
    for icpt, n in ((first, 2), (second, 3)):
        icpt.configure(config)
        for _ in range(n):
            icpt.on_acknowledgement(RecordMetadata("orders", 1, 5), None, Headers())
    first.close()
    first.close()  # twice: counted once
    sent = collect(reader)[SENT_MESSAGES]
    assert sent.points == [
        (
            {
                "messaging.system": "kafka",
                "messaging.operation.name": "send",
                "server.address": "broker-a",
                "server.port": 9092,
                "messaging.destination.name": "orders",
                "messaging.destination.partition.id": "1",
            },
            5,
        )
    ]
    second.on_acknowledgement(RecordMetadata("orders", 1, 6), None, Headers())
    assert collect(reader)[SENT_MESSAGES].value(messaging__destination__name="orders") == 6


def test_the_chain_leaves_out_an_idle_interceptor_but_still_rejects_a_misspelled_one() -> None:
    """Hooks that are properties raising AttributeError (off for now) are not a typo."""
    from kheaders.hooks import InterceptorChain

    class Idle:
        @property
        def on_send(self) -> object:
            raise AttributeError("off")

    class Misspelled:
        def on_sned(self, record: object) -> object:
            return record

    chain = InterceptorChain([Idle()])
    assert chain.on_send == ()
    assert chain.on_acknowledgement == ()
    with pytest.raises(TypeError, match="on_sned"):
        InterceptorChain([Misspelled()])


def test_the_async_producer_runs_the_same_metrics_interceptor(
    bootstrap: str, topic: str, meter_provider: MeterProvider, reader: InMemoryMetricReader
) -> None:
    import asyncio

    from kheaders.aio import AIOProducer

    config = {"bootstrap.servers": bootstrap}
    icpt = MetricsProducerInterceptor(meter_provider=meter_provider)
    icpt.configure(config)

    async def main() -> None:
        producer = AIOProducer(config, interceptors=[icpt])
        futures = [await producer.produce(topic, b"v%d" % i, partition=0) for i in range(4)]
        await asyncio.gather(*futures)
        await producer.close()

    asyncio.run(main())
    metrics = collect(reader)
    assert metrics[SENT_MESSAGES].value(messaging__destination__name=topic) == 4
    assert metrics[OPERATION_DURATION].value(messaging__destination__name=topic).count == 4


def test_a_global_provider_set_after_construction_is_found_by_configure(
    monkeypatch: pytest.MonkeyPatch, meter_provider: MeterProvider, reader: InMemoryMetricReader
) -> None:
    """Built before the application set its global MeterProvider (named in config): the
    interceptors look again in ``configure`` and report from then on; closing keeps the counts."""
    from opentelemetry import metrics as otel_metrics
    from opentelemetry.metrics import NoOpMeterProvider

    from kheaders import Headers, RecordMetadata

    monkeypatch.setattr(otel_metrics, "get_meter_provider", NoOpMeterProvider)
    producer, consumer = MetricsProducerInterceptor(), MetricsConsumerInterceptor()
    assert not producer.recording
    assert not consumer.recording
    monkeypatch.setattr(otel_metrics, "get_meter_provider", lambda: meter_provider)
    config = {"bootstrap.servers": "broker-a", "group.id": "billing"}
    producer.configure(config)
    consumer.configure(config)
    assert producer.recording
    assert consumer.recording
    producer.on_acknowledgement(RecordMetadata("orders", 0, 1), None, Headers())
    consumer.on_consume([Message(topic="orders", partition=0, offset=1)] * 2)
    producer.close()
    consumer.close()
    metrics = collect(reader)
    assert metrics[SENT_MESSAGES].points == [
        (
            {
                "messaging.system": "kafka",
                "messaging.operation.name": "send",
                "server.address": "broker-a",
                "messaging.destination.name": "orders",
                "messaging.destination.partition.id": "0",
            },
            1,
        )
    ]
    assert metrics[CONSUMED_MESSAGES].value(messaging__consumer__group__name="billing") == 2
