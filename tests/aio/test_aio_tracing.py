"""Trace context follows the task: 1,000 concurrent tasks, each in its own span, each produce
records carrying their own trace; process_span works inside ``async for``."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from kheaders.aio import AIOProducer
from kheaders.interceptors.tracing import TracingProducerInterceptor, process_span
from kheaders.tracecontext import extract_trace_parent
from tests.aio.conftest import OpenConsumer, producer_config, read_all

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

TASKS = 1000


async def test_each_of_1000_concurrent_tasks_produces_its_own_trace(
    bootstrap: str, topic: str, open_consumer: OpenConsumer
) -> None:
    provider = TracerProvider()
    tracer = provider.get_tracer("aio-test")
    expected: dict[bytes, str] = {}
    async with AIOProducer(
        producer_config(bootstrap),
        interceptors=[TracingProducerInterceptor("propagate", tracer_provider=provider)],
    ) as producer:

        async def task(n: int) -> None:
            with tracer.start_as_current_span(f"task {n}") as span:
                expected[b"%d" % n] = format(span.get_span_context().trace_id, "032x")
                await asyncio.sleep(0)  # every other task runs here, in its own span
                futures = [await producer.produce(topic, b"%d" % n) for _ in range(2)]
                await asyncio.sleep(0)
                for fut in futures:
                    await fut

        await asyncio.gather(*(task(n) for n in range(TASKS)))
    assert len(set(expected.values())) == TASKS
    consumer = await open_consumer(topic)
    records = await read_all(consumer, 2 * TASKS)
    wrong = [
        m.value()
        for m in records
        if (p := extract_trace_parent(m.headers())) is None or p.trace_id_hex != expected[m.value()]
    ]
    assert not wrong, f"{len(wrong)} records carry another task's trace (or none)"


async def test_process_span_inside_async_for_continues_the_record_trace(
    bootstrap: str, topic_factory: object, open_consumer: OpenConsumer
) -> None:
    source, sink = topic_factory(), topic_factory()  # type: ignore[operator]
    provider = TracerProvider()
    tracer = provider.get_tracer("aio-test")
    interceptor = TracingProducerInterceptor("propagate", tracer_provider=provider)
    async with AIOProducer(producer_config(bootstrap), interceptors=[interceptor]) as producer:
        origins = {}
        for n in range(5):
            with tracer.start_as_current_span("origin") as span:
                origins[b"%d" % n] = span.get_span_context().trace_id
                await (await producer.produce(source, b"%d" % n))
        consumer = await open_consumer(source)
        handled = 0
        async for msg in consumer:
            with process_span(msg, tracer) as span:
                assert span.get_span_context().trace_id == origins[msg.value()]
                await asyncio.sleep(0)  # other tasks may run; the span stays this task's
                assert trace.get_current_span() is span
                await (await producer.produce(sink, msg.value()))  # the next hop
            handled += 1
            if handled == 5:
                break
    hops = await read_all(await open_consumer(sink), 5)
    for msg in hops:
        parent = extract_trace_parent(msg.headers())
        assert parent is not None
        assert int(parent.trace_id_hex, 16) == origins[msg.value()]
