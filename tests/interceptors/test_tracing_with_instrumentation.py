"""TracingProducerInterceptor with opentelemetry-instrumentation-confluent-kafka active too.

``ConfluentKafkaInstrumentor().instrument()`` is what ``opentelemetry-instrument`` runs at
start-up. Whichever of the two was set up first injects the record's trace context; every
record carries exactly one ``traceparent`` (two make W3C consumers restart the trace), and
one log line says which side injects. Real instrumentation, real SDK, real broker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
import structlog
from opentelemetry import trace
from opentelemetry.instrumentation.confluent_kafka import ConfluentKafkaInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider

import kheaders
from kheaders._client import sending
from kheaders.interceptors.tracing import TracingProducerInterceptor
from tests.compat.conftest import read

pytestmark = pytest.mark.integration


@pytest.fixture
def instrumentor() -> Iterator[ConfluentKafkaInstrumentor]:
    made = ConfluentKafkaInstrumentor()
    yield made
    if made.is_instrumented_by_opentelemetry:
        made.uninstrument()


@pytest.fixture
def said_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The log line is written once per process: as if this test's producer were the first."""
    monkeypatch.setattr(sending, "_said", False)


def build(how: str, bootstrap: str, icpt: TracingProducerInterceptor) -> kheaders.Producer:
    config = {"bootstrap.servers": bootstrap, "linger.ms": 0}
    if how == "wrapped":
        return kheaders.wrap_producer(confluent_kafka.Producer(config), interceptors=[icpt])
    return kheaders.Producer(config, interceptors=[icpt])


def produce_two(producer: kheaders.Producer, tracer: trace.Tracer, topic: str) -> int:
    """Two records (no headers; a list of them) inside an application span; its span id."""
    with tracer.start_as_current_span("app") as app:
        producer.produce(topic, b"a")
        producer.produce(topic, b"b", headers=[("id", b"1")])
    assert producer.flush(15) == 0
    producer.close()
    return app.get_span_context().span_id


def traceparents(bootstrap: str, topic: str) -> list[list[str]]:
    consumer = confluent_kafka.cimpl.Consumer({"bootstrap.servers": bootstrap, "group.id": "t"})
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
    try:
        records = read(consumer, 2)
    finally:
        consumer.close()
    assert [m.value() for m in records] == [b"a", b"b"]
    assert [[k for k, _ in pairs(m) if k == "id"] for m in records] == [[], ["id"]]
    return [[v.decode() for k, v in pairs(m) if k == "traceparent"] for m in records]


def pairs(msg: Any) -> list[tuple[str, bytes]]:
    """A consumed record's headers (confluent's types them loosely)."""
    return list(msg.headers() or [])


def span_id(traceparent: str) -> int:
    return int(traceparent.split("-")[2], 16)


@pytest.mark.parametrize("how", ["kheaders", "wrapped"])
@pytest.mark.parametrize("mode", ["propagate", "span"])
def test_instrumentation_set_up_first_injects_alone(
    how: str,
    mode: str,
    bootstrap: str,
    topic: str,
    provider: TracerProvider,
    tracer: trace.Tracer,
    finished: Callable[[], list[ReadableSpan]],
    instrumentor: ConfluentKafkaInstrumentor,
    said_once: None,
) -> None:
    instrumentor.instrument(tracer_provider=provider)
    icpt = TracingProducerInterceptor(mode, tracer_provider=provider)
    with structlog.testing.capture_logs() as logs:
        producer = build(how, bootstrap, icpt)
        produce_two(producer, tracer, topic)
    found = traceparents(bootstrap, topic)
    assert [len(values) for values in found] == [1, 1], found
    sends = {s.context.span_id for s in finished() if s.name == f"{topic} send"}
    assert len(sends) == 2  # the instrumentation's spans
    assert {span_id(values[0]) for values in found} == sends
    said = [e for e in logs if e.get("injects") == sending.INSTRUMENTATION]
    assert len(said) == 1, logs
    assert said[0]["left_out"] == ["traceparent"]


@pytest.mark.parametrize("how", ["kheaders", "wrapped"])
def test_kheaders_set_up_first_injects_alone(
    how: str,
    bootstrap: str,
    topic: str,
    provider: TracerProvider,
    tracer: trace.Tracer,
    finished: Callable[[], list[ReadableSpan]],
    instrumentor: ConfluentKafkaInstrumentor,
    said_once: None,
) -> None:
    icpt = TracingProducerInterceptor("span", tracer_provider=provider)
    producer = build(how, bootstrap, icpt)
    instrumentor.instrument(tracer_provider=provider)
    with structlog.testing.capture_logs() as logs:
        produce_two(producer, tracer, topic)
    found = traceparents(bootstrap, topic)
    assert [len(values) for values in found] == [1, 1], found
    ours = {s.context.span_id for s in finished() if s.name == f"send {topic}"}
    assert {span_id(values[0]) for values in found} == ours
    assert not [s for s in finished() if s.name == f"{topic} send"]
    assert not [e for e in logs if e.get("injects")]


def test_a_traceparent_the_caller_passed_is_kept_as_plain_confluent_keeps_it(
    bootstrap: str,
    topic: str,
    provider: TracerProvider,
    tracer: trace.Tracer,
    instrumentor: ConfluentKafkaInstrumentor,
) -> None:
    """The caller's own header is not the interceptor's to leave out: plain confluent-kafka
    under the instrumentation sends it and the instrumentation's (its known behaviour)."""
    instrumentor.instrument(tracer_provider=provider)
    given = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "linger.ms": 0}
    icpt = TracingProducerInterceptor(tracer_provider=provider)
    for producer in (
        confluent_kafka.Producer(config),
        kheaders.Producer(config, interceptors=[icpt]),
    ):
        producer.produce(topic, b"a", headers=[("traceparent", given.encode())])
        assert producer.flush(15) == 0
    consumer = confluent_kafka.cimpl.Consumer({"bootstrap.servers": bootstrap, "group.id": "t"})
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
    try:
        plain, ours = read(consumer, 2)
    finally:
        consumer.close()
    assert [k for k, _ in pairs(ours)] == [k for k, _ in pairs(plain)]
    assert pairs(ours)[0] == pairs(plain)[0] == ("traceparent", given.encode())


AIO_SCRIPT = """
import asyncio, json, sys
from opentelemetry.instrumentation.confluent_kafka import ConfluentKafkaInstrumentor
from opentelemetry.sdk.trace import TracerProvider

provider = TracerProvider()
ConfluentKafkaInstrumentor().instrument(tracer_provider=provider)  # before kheaders.aio

from kheaders.interceptors.tracing import TracingProducerInterceptor  # noqa: E402
from kheaders.aio import AIOProducer  # noqa: E402

bootstrap, topic, mode = sys.argv[1:]

async def main():
    icpt = TracingProducerInterceptor(mode, tracer_provider=provider)
    producer = AIOProducer({"bootstrap.servers": bootstrap, "linger.ms": 0}, interceptors=[icpt])
    with provider.get_tracer("app").start_as_current_span("app"):
        first = await producer.produce(topic, b"a")
        second = await producer.produce(topic, b"b", headers=[("id", b"1")])
    await first, await second
    await producer.close()

asyncio.run(main())
"""


@pytest.mark.parametrize("mode", ["propagate", "span"])
def test_the_async_producer_under_instrumentation_set_up_first_carries_one_traceparent(
    mode: str, bootstrap: str, topic: str, tmp_path: Any
) -> None:
    """The instrumentation leaves asyncio clients alone (confluent's too), whatever the import
    order: the interceptor injects, once. A process of its own: instrument() runs before
    kheaders.aio is imported, as under ``opentelemetry-instrument``."""
    import os
    import subprocess
    import sys

    script = tmp_path / "aio_instrumented.py"
    script.write_text(AIO_SCRIPT)
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root}
    done = subprocess.run(
        [sys.executable, str(script), bootstrap, topic, mode],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = traceparents(bootstrap, topic)
    assert [len(values) for values in found] == [1, 1], found
