"""Produce groups: kheaders vs raw confluent-kafka, by-hand tracing, and OTel's instrumentation.

Every contender gets the same producer config, the same records and the same loop shape;
the timed section is the produce loop plus ``flush()``. ``BufferError`` (queue full) is
handled the same way everywhere: ``poll(0)`` and retry.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import confluent_kafka
from opentelemetry import propagate
from opentelemetry.propagators.textmap import Setter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from bench._model import Contender, Env, Group, PeakRss, Sample, Target
from bench._workload import (
    CLIENT_ID,
    CLIENT_ID_VALUE,
    CONTENT_TYPE,
    JSON_TYPE,
    HeaderList,
    Workload,
    workload,
)

Produce = Callable[..., None]


def _retry(poll: Callable[[float], object], produce: Produce, **record: object) -> None:
    """The queue is full: serve delivery reports and try again until librdkafka takes it."""
    while True:
        poll(0)
        try:
            produce(**record)
            return
        except BufferError:
            continue


def loop_fixed(produce: Produce, poll: Callable[[float], object], topic: str, w: Workload) -> None:
    """Records with pre-encoded values and a ready header list (groups 1 and 2-bare)."""
    for k, v, h in zip(w.keys, w.values, w.headers, strict=True):
        try:
            produce(topic, value=v, key=k, headers=h)
        except BufferError:
            _retry(poll, produce, topic=topic, value=v, key=k, headers=h)


def loop_fresh_list(
    produce: Produce, poll: Callable[[float], object], topic: str, w: Workload
) -> None:
    """Records whose header list (client id, content type) is built per record (group 3).

    A new list each time: OTel's instrumentation appends ``traceparent`` to it in place.
    """
    cid = (CLIENT_ID, CLIENT_ID_VALUE)
    ctype = (CONTENT_TYPE, JSON_TYPE)
    for k, v in zip(w.keys, w.values, strict=True):
        try:
            produce(topic=topic, value=v, key=k, headers=[cid, ctype])
        except BufferError:
            _retry(poll, produce, topic=topic, value=v, key=k, headers=[cid, ctype])


def loop_payloads(
    produce: Produce, poll: Callable[[float], object], topic: str, w: Workload
) -> None:
    """Dict payloads, no headers given: interceptors and the serializer add them (group 2)."""
    for k, p in zip(w.keys, w.payloads, strict=True):
        try:
            produce(topic, value=p, key=k)
        except BufferError:
            _retry(poll, produce, topic=topic, value=p, key=k)


class _ListSetter(Setter[HeaderList]):
    def set(self, carrier: HeaderList, key: str, value: str) -> None:
        carrier.append((key, value.encode()))


_LIST_SETTER = _ListSetter()


POLL_EVERY = 1
"""Records between ``poll(0)`` calls in the span group (applications serve reports regularly)."""


def loop_fresh_list_polled(
    produce: Produce, poll: Callable[[float], object], topic: str, w: Workload
) -> None:
    """:func:`loop_fresh_list` with ``poll(0)`` every :data:`POLL_EVERY` records (group 2).

    confluent-kafka asks producers to call ``poll()`` regularly to serve delivery reports,
    and its examples do it after every ``produce``. A span ended at acknowledgement lives
    until then: without polling, every record's span would stay alive until ``flush()``.
    """
    cid = (CLIENT_ID, CLIENT_ID_VALUE)
    ctype = (CONTENT_TYPE, JSON_TYPE)
    every = POLL_EVERY
    for i, (k, v) in enumerate(zip(w.keys, w.values, strict=True)):
        try:
            produce(topic=topic, value=v, key=k, headers=[cid, ctype])
        except BufferError:
            _retry(poll, produce, topic=topic, value=v, key=k, headers=[cid, ctype])
        if i % every == every - 1:
            poll(0)


def loop_by_hand(
    produce: Produce, poll: Callable[[float], object], topic: str, w: Workload
) -> None:
    """What a careful user writes without kheaders: json.dumps, header list, propagate.inject."""
    inject = propagate.inject
    dumps = json.dumps
    setter = _LIST_SETTER
    for k, p in zip(w.keys, w.payloads, strict=True):
        headers: HeaderList = [(CLIENT_ID, CLIENT_ID_VALUE), (CONTENT_TYPE, JSON_TYPE)]
        inject(headers, setter=setter)
        value = dumps(p).encode()
        try:
            produce(topic, value=value, key=k, headers=headers)
        except BufferError:
            _retry(poll, produce, topic=topic, value=value, key=k, headers=headers)


def loop_one_list(
    produce: Produce, poll: Callable[[float], object], topic: str, w: Workload
) -> None:
    """Values already bytes and ONE header list for every record: only the wrapper differs.

    The same ``(str, bytes)`` list object goes into every call (target 0): whatever a
    wrapper checks or copies per record shows up here and nowhere else.
    """
    h = w.headers[0]
    for k, v in zip(w.keys, w.values, strict=True):
        try:
            produce(topic, value=v, key=k, headers=h)
        except BufferError:
            _retry(poll, produce, topic=topic, value=v, key=k, headers=h)


Loop = Callable[[Produce, Callable[[float], object], str, Workload], None]


def _run_producer(
    env: Env,
    make: Callable[[], Any],
    loop: Loop,
    n: int,
    *,
    around: Callable[[Callable[[], None]], None] | None = None,
    after: Callable[[Sample], None] | None = None,
) -> Sample:
    """Set up a producer (untimed), time ``loop`` + ``flush()``, check every record landed."""
    w = workload(n)
    topic = env.new_topic("produce")
    producer = make()
    produce, poll, flush = producer.produce, producer.poll, producer.flush

    def body() -> None:
        loop(produce, poll, topic, w)
        left = flush(60)
        if left:
            raise RuntimeError(f"{left} records still queued after flush")

    gc.collect()
    with PeakRss() as mem:
        t0 = time.perf_counter()
        if around is None:
            body()
        else:
            around(body)
        seconds = time.perf_counter() - t0
    del producer
    try:
        env.check_count(topic, n)
    finally:
        env.drop_topic(topic)
    sample = Sample(seconds, n, mem.growth_mb, mem.gc_extra(n))
    if after is not None:
        after(sample)
    return sample


def _run_producer_cpu(
    env: Env,
    make: Callable[[], Any],
    loop: Loop,
    n: int,
    check: Callable[[Sample], None] | None = None,
) -> Sample:
    """:func:`_run_producer` with the process CPU time of the timed section per record as
    ``cpu_us`` (all threads, librdkafka's included): steadier than wall time on a busy
    machine, where a synchronous send mostly waits to be scheduled."""
    cpu = [0.0]

    def around(body: Callable[[], None]) -> None:
        start = time.process_time()
        body()
        cpu[0] = time.process_time() - start

    def after(sample: Sample) -> None:
        sample.extra["cpu_us"] = cpu[0] / n * 1e6
        if check is not None:
            check(sample)

    return _run_producer(env, make, loop, n, around=around, after=after)


def _kheaders_producer() -> type[Any] | None:
    try:
        from kheaders import Producer
    except ImportError:
        return None
    return Producer


def _unavailable(what: str) -> str:
    return f"unavailable: {what} is not in this checkout yet"


def produce_group(env: Env) -> Group:
    """Round 1 (met): kheaders.Producer, no interceptors, >= 0.85x raw; a list per record."""
    cfg = env.producer_config()
    kp = _kheaders_producer()

    def raw(n: int) -> Sample:
        return _run_producer(env, lambda: confluent_kafka.Producer(cfg), loop_fixed, n)

    def kh(n: int) -> Sample:
        assert kp is not None
        return _run_producer(env, lambda: kp(cfg), loop_fixed, n)

    return Group(
        name="produce",
        title="Produce, 3 headers as a list",
        baseline="confluent-kafka",
        contenders=[
            Contender("confluent-kafka", raw),
            Contender("kheaders", kh if kp else None, "" if kp else _unavailable("Producer")),
        ],
        targets=[Target("r1. produce >= 0.85x raw", "kheaders", "confluent-kafka", ">=", 0.85)],
        count=env.records,
        warmup=max(env.records // 10, 2000),
    )


def plain_group(env: Env) -> Group:
    """Target 0: kheaders.Producer (no interceptors) >= 0.9x raw, one header list reused."""
    cfg = env.producer_config()
    kp = _kheaders_producer()

    def raw(n: int) -> Sample:
        return _run_producer(env, lambda: confluent_kafka.Producer(cfg), loop_one_list, n)

    def kh(n: int) -> Sample:
        assert kp is not None
        return _run_producer(env, lambda: kp(cfg), loop_one_list, n)

    return Group(
        name="produce-plain",
        title="Produce, bytes values, one header list reused",
        baseline="confluent-kafka",
        contenders=[
            Contender("confluent-kafka", raw),
            Contender("kheaders", kh if kp else None, "" if kp else _unavailable("Producer")),
        ],
        targets=[
            Target("0. plain produce >= 0.95x raw", "kheaders", "confluent-kafka", ">=", 0.95)
        ],
        count=env.records,
        warmup=max(env.records // 10, 2000),
    )


class CountingSpanExporter(SpanExporter):
    """Counts the spans exported and keeps none, as a network exporter does once it has sent.

    OTel's ``InMemorySpanExporter`` keeps every span: each full garbage collection then walks
    all spans exported so far, a cost that grows with the run and that no production exporter
    has (the first round measured with it; bench/README.md gives both figures).
    """

    def __init__(self) -> None:
        self.count = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.count += len(spans)
        return SpanExportResult.SUCCESS

    def clear(self) -> None:
        self.count = 0

    def shutdown(self) -> None:
        return None


def _sdk_provider(exporter: SpanExporter | None = None) -> TracerProvider:
    provider = TracerProvider()
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def traced_group(env: Env) -> Group:
    """Target 1: tracing (propagate) + client id + JSON via kheaders vs bare and by hand."""
    cfg = env.producer_config()
    kp = _kheaders_producer()
    provider = _sdk_provider()  # a real SDK: the active span is valid and gets injected
    tracer = provider.get_tracer("bench")

    def in_span(body: Callable[[], None]) -> None:
        with tracer.start_as_current_span("bench batch"):
            body()

    def bare(n: int) -> Sample:
        return _run_producer(env, lambda: confluent_kafka.Producer(cfg), loop_fixed, n)

    def by_hand(n: int) -> Sample:
        return _run_producer(
            env, lambda: confluent_kafka.Producer(cfg), loop_by_hand, n, around=in_span
        )

    make_kh: Callable[[], Any] | None = None
    note = ""
    try:
        from kheaders import JsonSerializer
        from kheaders.interceptors.client_id import (
            ClientIdInterceptor,
        )
        from kheaders.interceptors.tracing import (
            TracingProducerInterceptor,
        )
    except ImportError:
        note = _unavailable("kheaders.interceptors.tracing / client_id")
    else:
        if kp is None:
            note = _unavailable("Producer")
        else:

            def make_kh() -> Any:
                return kp(
                    cfg,
                    interceptors=[
                        TracingProducerInterceptor(mode="propagate", tracer_provider=provider),
                        ClientIdInterceptor(client_id=CLIENT_ID_VALUE.decode()),
                    ],
                    value_serializer=JsonSerializer(),
                )

    def kh(n: int) -> Sample:
        assert make_kh is not None
        return _run_producer(env, make_kh, loop_payloads, n, around=in_span)

    return Group(
        name="produce-traced",
        title="Produce JSON + traceparent + client id",
        baseline="confluent by hand",
        contenders=[
            Contender("confluent bare", bare),
            Contender("confluent by hand", by_hand),
            Contender("kheaders interceptors", kh if make_kh else None, note),
        ],
        targets=[
            Target(
                "r1. traced produce >= 0.8x by hand",
                "kheaders interceptors",
                "confluent by hand",
                ">=",
                0.8,
            ),
            Target(
                "1. traced produce >= 0.5x bare",
                "kheaders interceptors",
                "confluent bare",
                ">=",
                0.5,
            ),
        ],
        count=env.records,
        warmup=max(env.records // 10, 2000),
    )


def spans_group(env: Env) -> Group:
    """Target 2: one span per record, kheaders ``span`` mode vs OTel's instrumentation."""
    from opentelemetry.instrumentation.confluent_kafka import ConfluentKafkaInstrumentor

    cfg = env.producer_config()
    kp = _kheaders_producer()
    exporter = CountingSpanExporter()
    provider = _sdk_provider(exporter)

    def check_spans(sample: Sample) -> None:
        spans = exporter.count
        exporter.clear()
        sample.extra["spans"] = spans
        if spans != sample.count:
            raise RuntimeError(f"{spans} spans exported for {sample.count} records")

    def otel(n: int) -> Sample:
        exporter.clear()

        def make() -> Any:
            return ConfluentKafkaInstrumentor().instrument_producer(
                confluent_kafka.Producer(cfg), tracer_provider=provider
            )

        return _run_producer(env, make, loop_fresh_list_polled, n, after=check_spans)

    make_kh: Callable[[], Any] | None = None
    note = ""
    try:
        from kheaders.interceptors.tracing import (
            TracingProducerInterceptor,
        )
    except ImportError:
        note = _unavailable("kheaders.interceptors.tracing")
    else:
        if kp is None:
            note = _unavailable("Producer")
        else:

            def make_kh() -> Any:
                return kp(
                    cfg,
                    interceptors=[
                        TracingProducerInterceptor(
                            mode="span", tracer_provider=provider, max_pending=2_000_000
                        )
                    ],
                )

    def kh(n: int) -> Sample:
        assert make_kh is not None
        exporter.clear()
        return _run_producer(env, make_kh, loop_fresh_list_polled, n, after=check_spans)

    def close() -> None:
        exporter.clear()
        provider.shutdown()

    return Group(
        name="produce-spans",
        title="Produce, one span per record",
        baseline="otel instrumentation",
        contenders=[
            Contender("otel instrumentation", otel),
            Contender("kheaders span mode", kh if make_kh else None, note),
        ],
        targets=[
            Target(
                "2. span per record >= 1.0x OTel",
                "kheaders span mode",
                "otel instrumentation",
                ">=",
                1.0,
            ),
            Target(
                "2. (aim) span per record >= 1.3x OTel",
                "kheaders span mode",
                "otel instrumentation",
                ">=",
                1.3,
            ),
        ],
        count=env.records,
        warmup=max(env.records // 20, 2000),
        close=close,
    )
