"""No secret in any log line, repr, span attribute or metric label: each surface runs over
SASL with the tracing, metrics and logging interceptors configured from the full client
config (password included), librdkafka's debug lines routed to stdlib logging, and every
captured text is searched for the password."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from kheaders import BrokerUnavailableError, Consumer, Producer
from kheaders.aio import AIOConsumer, AIOProducer
from kheaders.broker import ApacheKafka, create_topic
from kheaders.deadletter import DeadLetter
from kheaders.interceptors.logging import LoggingInterceptor
from kheaders.interceptors.metrics import MetricsConsumerInterceptor, MetricsProducerInterceptor
from kheaders.interceptors.tracing import TracingConsumerInterceptor, TracingProducerInterceptor
from kheaders.mirror import Mirror
from kheaders.processing import Processor
from tests.security.capture import Capture, capturing
from tests.security.helpers import read_all
from tests.support.security import PASSWORD, Certificates

pytestmark = pytest.mark.integration

FAST_GROUP = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}


def _producing(capture: Capture) -> list[object]:
    return [
        TracingProducerInterceptor("span", tracer_provider=capture.tracer_provider),
        MetricsProducerInterceptor(meter_provider=capture.meter_provider),
        LoggingInterceptor("info"),
    ]


def _consuming(capture: Capture) -> list[object]:
    return [
        TracingConsumerInterceptor(tracer_provider=capture.tracer_provider),
        MetricsConsumerInterceptor(meter_provider=capture.meter_provider),
        LoggingInterceptor("info"),
    ]


def _assert_no_secret(capture: Capture) -> None:
    text = capture.text()
    assert PASSWORD not in text
    # the capture saw the run: librdkafka's SASL exchange, spans with the server, metrics
    assert any("SASL" in line for line in capture.records.lines)
    assert any("sasl.password" in line for line in capture.records.lines)  # its config dump
    assert capture.events  # the logging interceptor's structlog events
    assert capture.spans.get_finished_spans()
    assert "messaging.client" in capture.metric_json()


@pytest.mark.parametrize("how", ["plain", "scram"])
def test_producer_and_consumer(
    how: str, secured: Callable[[str], dict[str, object]], secure_topic: str
) -> None:
    with capturing() as capture:
        config = {**secured(how), **capture.client_logging()}
        producer = Producer({**config, "interceptor.classes": _producing(capture)})
        producer.produce(secure_topic, b"v", headers={"tenant": b"acme"})
        assert producer.flush(30) == 0
        consumer = Consumer(
            {**config, "group.id": "leaks", "interceptor.classes": _consuming(capture)}
        )
        consumer.assign([TopicPartition(secure_topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + 60
        msg = None
        while msg is None and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
        capture.add(repr(producer), repr(consumer), repr(msg), repr(msg and msg.headers()))
        capture.add(*(repr(i) for i in producer.interceptors.interceptors))
        capture.add(*(repr(i) for i in consumer.interceptors.interceptors))
        consumer.close()
        producer.close()
    assert msg is not None
    assert msg.error() is None
    _assert_no_secret(capture)


def test_aio_producer_and_consumer(
    secured: Callable[[str], dict[str, object]], secure_topic: str
) -> None:
    async def main(capture: Capture) -> Any:
        config = {**secured("scram"), **capture.client_logging()}
        async with AIOProducer({**config, "interceptor.classes": _producing(capture)}) as p:
            delivery = await p.produce(secure_topic, b"v", headers={"h": b"1"})
            assert (await delivery).error() is None
            capture.add(repr(p))
        consumer = AIOConsumer(
            {**config, "group.id": "leaks-aio", "interceptor.classes": _consuming(capture)}
        )
        try:
            await consumer.assign([TopicPartition(secure_topic, 0, OFFSET_BEGINNING)])
            async with asyncio.timeout(60):
                while (msg := await consumer.poll(0.5)) is None:
                    pass
            capture.add(repr(consumer), repr(msg))
            return msg
        finally:
            await consumer.close()

    with capturing() as capture:
        msg = asyncio.run(main(capture))
    assert msg.error() is None
    _assert_no_secret(capture)


def test_processor_and_mirror(
    secured: Callable[[str], dict[str, object]],
    secure_broker: ApacheKafka,
    bootstrap: str,
    secure_topic: str,
) -> None:
    create_topic(secure_broker.bootstrap, secure_topic + "-dlt")
    create_topic(bootstrap, secure_topic)
    with capturing() as capture:
        config = {**secured("plain"), **capture.client_logging()}
        producer = Producer(config)
        for value in (b"ok", b"bad"):
            producer.produce(secure_topic, value, headers={"tenant": b"acme"})
        assert producer.flush(30) == 0
        handled = threading.Event()

        def handle(msg: Any) -> None:
            if msg.value() == b"bad":
                raise ValueError("refused")
            handled.set()

        processor = Processor(
            {**config, "group.id": f"leaks-{uuid.uuid4().hex[:6]}", **FAST_GROUP,
             "auto.offset.reset": "earliest", "interceptor.classes": _consuming(capture)},
            [secure_topic], handle, dead_letter=DeadLetter(), handle_signals=False,
            tracer_provider=capture.tracer_provider, meter_provider=capture.meter_provider,
        )  # fmt: skip
        mirror = Mirror(
            {**config, "group.id": f"leaks-m-{uuid.uuid4().hex[:6]}", **FAST_GROUP},
            bootstrap, [secure_topic], tracer_provider=capture.tracer_provider,
            meter_provider=capture.meter_provider,
        )  # fmt: skip
        threads = [
            threading.Thread(target=processor.run, daemon=True),
            threading.Thread(target=mirror.run, kwargs={"idle_timeout": 120}, daemon=True),
        ]
        for thread in threads:
            thread.start()
        try:
            assert handled.wait(60)
            read_all(config, secure_topic + "-dlt", 1)
            read_all({"bootstrap.servers": bootstrap}, secure_topic, 2)
        finally:
            processor.stop()
            mirror.stop()
            for thread in threads:
                thread.join(60)
        capture.add(repr(processor), repr(mirror), repr(mirror.plan), repr(mirror.stats))
    _assert_no_secret(capture)


def test_refused_certificate_with_a_right_password(
    secured: Callable[[str], dict[str, object]], certificates: Certificates, bootstrap: str
) -> None:
    """The error paths: a password that would have been accepted stays out of the messages."""
    with capturing() as capture:
        config = {
            **secured("scram"),
            **capture.client_logging(),
            "ssl.ca.location": str(certificates.untrusted_ca),
        }
        with pytest.raises(BrokerUnavailableError) as mirror_error:
            Mirror(config, bootstrap, ["orders"]).check()
        processor = Processor(
            {**config, "group.id": "leaks"}, ["orders"], lambda msg: None, handle_signals=False
        )
        with pytest.raises(BrokerUnavailableError) as processor_error:
            processor.run()
        capture.add(mirror_error.value, processor_error.value, repr(processor_error.value))
    text = capture.text()
    assert "certificate verify failed" in str(mirror_error.value)
    assert PASSWORD not in text
