"""kheaders' own counters (kheaders/_telemetry.py): interceptor failures, refused records,
deserialization failures and dead letters, counted on the real broker."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import TopicPartition
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from kheaders import (
    Consumer,
    DeserializationError,
    HeaderLimitError,
    HeaderLimits,
    JsonDeserializer,
    Producer,
    ProducerRecord,
)
from kheaders._telemetry import (
    DEAD_LETTERS,
    DESERIALIZATION_FAILURES,
    INTERCEPTOR_FAILURES,
    RECORDS_REFUSED,
)
from kheaders.deadletter import DeadLetterPublisher
from tests.interceptors.metrics_helpers import collect

pytestmark = pytest.mark.integration


class Boom:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        raise RuntimeError("boom")

    def on_acknowledgement(self, *_args: object) -> None:
        raise RuntimeError("boom")


def test_interceptor_failures_and_refused_records_are_counted(
    bootstrap: str,
    topic: str,
    kheaders_counters: MeterProvider,
    reader: InMemoryMetricReader,
) -> None:
    producer = Producer(
        {"bootstrap.servers": bootstrap},
        interceptors=[Boom()],
        limits=HeaderLimits(max_headers=2, max_value_bytes=4),
    )
    for _ in range(3):
        producer.produce(topic, b"v")
    with pytest.raises(HeaderLimitError):
        producer.produce(topic, b"v", headers=[("a", b"12345")])
    with pytest.raises(HeaderLimitError):
        producer.produce(topic, b"v", headers=[("a", b"1"), ("b", b"2"), ("c", b"3")])
    assert producer.flush(30) == 0
    producer.close()

    metrics = collect(reader)
    failures = metrics[INTERCEPTOR_FAILURES]
    assert failures.unit == "{failure}"
    # 5 sends; 3 delivered and 2 refused records are acknowledged: 5 ack failures too
    assert failures.value(kheaders__interceptor="Boom", kheaders__hook="on_send") == 5
    assert failures.value(kheaders__interceptor="Boom", kheaders__hook="on_acknowledgement") == 5
    assert producer.interceptors.errors == {"Boom": 10}
    refused = metrics[RECORDS_REFUSED]
    assert refused.unit == "{record}"
    assert refused.value(kheaders__header__limit="max_value_bytes") == 1
    assert refused.value(kheaders__header__limit="max_headers") == 1


def test_deserialization_failures_and_dead_letters_are_counted(
    bootstrap: str,
    topic: str,
    kheaders_counters: MeterProvider,
    reader: InMemoryMetricReader,
) -> None:
    with Producer({"bootstrap.servers": bootstrap}) as producer:
        for value in (b'{"ok": 1}', b"{not json", b'{"ok": 2}', b"]"):
            producer.produce(topic, value)
        producer.flush(30)
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "enable.auto.commit": False},
        value_deserializer=JsonDeserializer(),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    dlq_producer = Producer({"bootstrap.servers": bootstrap})
    dlq = DeadLetterPublisher(dlq_producer)
    good = bad = 0
    deadline = time.monotonic() + 30
    while good + bad < 4 and time.monotonic() < deadline:
        try:
            msg = consumer.poll(0.5)
        except DeserializationError as exc:
            bad += 1
            dlq.publish(exc)
            continue
        if msg is not None and msg.error() is None:
            good += 1
    consumer.close()
    assert (good, bad) == (2, 2)
    assert dlq_producer.flush(30) == 0
    dlq_producer.close()

    metrics = collect(reader)
    failures = metrics[DESERIALIZATION_FAILURES]
    assert failures.unit == "{record}"
    assert failures.points == [
        ({"messaging.destination.name": topic, "kheaders.field": "value"}, 2)
    ]
    dead = metrics[DEAD_LETTERS]
    assert dead.unit == "{record}"
    assert dead.points == [({"messaging.destination.name": f"{topic}-dlt"}, 2)]
