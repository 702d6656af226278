"""One contender of ``bench.instructions`` under callgrind.

Run as ``python -m bench._icount_child NAME N SIZE`` by ``bench.instructions``. librdkafka is
replaced by :class:`FakeProducer` (a list and a loop calling delivery reports),
so the instructions counted are the Python side only, the same for every contender, and do
not depend on broker timing or librdkafka's threads. Everything is set up and warmed up
before the ``N`` timed records, and the parent subtracts a run with ``N = 0``.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from typing import Any

import confluent_kafka
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind

from bench import _produce
from bench._produce import POLL_EVERY, CountingSpanExporter
from bench._workload import (
    CLIENT_ID,
    CLIENT_ID_VALUE,
    CONTENT_TYPE,
    JSON_TYPE,
    Workload,
    workload,
)

WARMUP = 500
TRACED = ("traced bare", "traced by hand", "traced kheaders")
"""The ``produce-traced`` contenders (no spans: nothing to count but instructions)."""
CONFIG = {"bootstrap.servers": "127.0.0.1:9092", "client.id": "bench-client"}


class FakeProducer:
    """Stands in for ``confluent_kafka.Producer``: records are queued, ``poll`` delivers them.

    Delivery reports get a real ``confluent_kafka.Message`` (as librdkafka builds one per
    report when a callback is set), offsets counting from 0.
    """

    def __init__(self, config: dict[str, object] | None = None, **_: object) -> None:
        self.config = dict(config or {})
        self._queue: list[tuple[Callable[..., object], str, object, object]] = []
        self._offset = 0

    def produce(
        self,
        topic: str,
        value: object = None,
        key: object = None,
        partition: int = -1,
        callback: Callable[..., object] | None = None,
        on_delivery: Callable[..., object] | None = None,
        timestamp: int = 0,
        headers: object = None,
    ) -> None:
        cb = callback or on_delivery
        if cb is not None:
            self._queue.append((cb, topic, key, value))

    def poll(self, timeout: float = -1) -> int:
        queue, self._queue = self._queue, []
        message = confluent_kafka.Message
        offset = self._offset
        for cb, topic, key, value in queue:
            cb(None, message(topic=topic, partition=0, offset=offset, key=key, value=value))
            offset += 1
        self._offset = offset
        return len(queue)

    def flush(self, timeout: float = -1) -> int:
        self.poll(0)
        return 0

    def __len__(self) -> int:
        return len(self._queue)


def _provider() -> tuple[TracerProvider, CountingSpanExporter]:
    exporter = CountingSpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _loop(producer: Any, w: Workload, n: int) -> None:
    """The span group's loop (``bench._produce.loop_fresh_list_polled``), without retries."""
    produce, poll = producer.produce, producer.poll
    cid = (CLIENT_ID, CLIENT_ID_VALUE)
    ctype = (CONTENT_TYPE, JSON_TYPE)
    for i, (k, v) in enumerate(zip(w.keys[:n], w.values[:n], strict=True)):
        produce(topic="bench", value=v, key=k, headers=[cid, ctype])
        if i % POLL_EVERY == POLL_EVERY - 1:
            poll(0)


def _traced(name: str, w: Workload) -> Callable[[int], None]:
    """The ``produce-traced`` group's contenders (bench._produce), inside an active span."""
    provider = TracerProvider()
    tracer = provider.get_tracer("bench")
    producer: Any = FakeProducer(CONFIG)
    loop = _produce.loop_fixed
    if name == "traced by hand":
        loop = _produce.loop_by_hand
    elif name == "traced kheaders":
        from kheaders import JsonSerializer, Producer
        from kheaders.interceptors.client_id import ClientIdInterceptor
        from kheaders.interceptors.tracing import TracingProducerInterceptor

        class FakeBacked(Producer):
            _client_class = FakeProducer

        producer = FakeBacked(
            CONFIG,
            interceptors=[
                TracingProducerInterceptor(mode="propagate", tracer_provider=provider),
                ClientIdInterceptor(client_id=CLIENT_ID_VALUE.decode()),
            ],
            value_serializer=JsonSerializer(),
        )
        loop = _produce.loop_payloads
    produce, poll = producer.produce, producer.poll

    def run(n: int) -> None:
        part = Workload(w.keys[:n], w.values[:n], w.headers[:n], w.payloads[:n])
        with tracer.start_as_current_span("bench batch"):
            loop(produce, poll, "bench", part)

    return run


def build(name: str, w: Workload) -> tuple[Callable[[int], None], Callable[[], int]]:
    """``(send n records and serve their reports, spans finished so far)`` for ``name``."""
    if name in TRACED:
        return _traced(name, w), lambda: -1
    provider, exporter = _provider()
    confluent_kafka.Producer = FakeProducer  # type: ignore[misc]
    if name == "sdk span only":
        tracer = provider.get_tracer("bench")

        def sdk(n: int) -> None:
            for _ in range(n):
                tracer.start_span("send bench", kind=SpanKind.PRODUCER).end()

        return sdk, lambda: exporter.count
    producer: Any
    if name == "otel instrumentation":
        from opentelemetry.instrumentation.confluent_kafka import ConfluentKafkaInstrumentor

        producer = ConfluentKafkaInstrumentor().instrument_producer(
            FakeProducer(CONFIG), tracer_provider=provider
        )
    elif name == "kheaders span mode":
        from kheaders import Producer
        from kheaders.interceptors.tracing import TracingProducerInterceptor

        class FakeBacked(Producer):
            _client_class = FakeProducer  # the client kheaders builds from the config

        producer = FakeBacked(
            CONFIG,
            interceptors=[TracingProducerInterceptor(mode="span", tracer_provider=provider)],
        )
        if not isinstance(producer.wrapped, FakeProducer):  # never measure (or wait for) a broker
            raise SystemExit("kheaders.Producer did not build the fake client")
    else:
        raise SystemExit(f"unknown contender {name!r}")

    def run(n: int) -> None:
        _loop(producer, w, n)
        producer.flush()

    return run, lambda: exporter.count


def main(argv: list[str]) -> int:
    """Warm up, then run ``N`` records; exit 1 if the span count is not what was sent.

    ``argv``: contender name, ``N``, and the workload size (the same in the parent's runs
    with ``N`` and with 0 records, so making the inputs cancels out).
    """
    name, n, size = argv[0], int(argv[1]), int(argv[2])
    w = workload(max(size, n, WARMUP))
    run, spans = build(name, w)
    if os.environ.get("BENCH_GC") == "off":  # where the collector's share is asked for
        gc.disable()
    run(WARMUP)
    run(n)
    if name not in TRACED and spans() != WARMUP + n:
        print(f"{name}: {spans()} spans for {WARMUP + n} records", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
