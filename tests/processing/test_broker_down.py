"""The broker goes away while a failure is being published: the record is not committed and
is handled again later. Spans, the duration histogram and the counters are checked on the way."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kheaders.broker import create_topic
from kheaders.processing import RetryTopics
from tests.processing.helpers import Running, config, make, produce, read_all, wait_for

pytestmark = pytest.mark.integration

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01".encode()


def _sums(reader: InMemoryMetricReader) -> dict[str, float]:
    data = reader.get_metrics_data()
    out: dict[str, float] = {}
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    if value is None:
                        value = point.count  # type: ignore[union-attr]  # a histogram: how many
                    out[metric.name] = out.get(metric.name, 0) + value
    return out


class Commits:
    """A consumer interceptor: the events of the test, commits included, in order."""

    def __init__(self, events: list[tuple[str, Any]]) -> None:
        self.events = events

    def on_commit(self, offsets: list[Any]) -> None:
        for tp in offsets:
            self.events.append(("commit", tp.offset))


def test_a_failure_unpublished_while_the_broker_is_down_is_handled_again_uncommitted(
    proxied: tuple[Any, Any], driver: str
) -> None:
    _broker, proxy = proxied
    bootstrap = proxy.address
    topic = create_topic(bootstrap, f"down-{uuid.uuid4().hex[:8]}", partitions=1)
    records = [
        {"key": b"k", "value": f"v{i}".encode(), "headers": [("traceparent", TRACEPARENT)]}
        for i in range(10)
    ]
    produce(bootstrap, topic, records)
    events: list[tuple[str, Any]] = []
    lock = threading.Lock()
    cut = threading.Event()

    def handle(msg: Any) -> None:
        value = msg.value()
        with lock:
            events.append(("handled", value))
        if value == b"v5" and not cut.is_set():
            cut.set()
            proxy.refuse(True)  # the broker is gone for everyone
            proxy.cut()
            raise ConnectionError("downstream failed just as the broker went away")
        if value == b"v9":
            raise ValueError("always")

    reader = InMemoryMetricReader()
    spans = InMemorySpanExporter()
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(spans))
    # The session outlasts the blackout by far. librdkafka itself gives up a member that got
    # no answer from its coordinator for session.timeout.ms ("Consumer group session timed
    # out ... revoking assignment and rejoining"), and Apache Kafka evicts it as well; the
    # partition then restarts from the last commit and v5 is handled a third time: right,
    # at least once, but not what this test is about. At the processing tests' 3 s session
    # the blackout (message.timeout.ms, 2 s, and the time to notice) came within a hair of
    # it on Tansu and crossed it on Kafka. (Not longer: a Tansu join takes half of it.)
    settings: dict[str, Any] = {
        "interceptor.classes": [Commits(events)],
        "session.timeout.ms": 20_000,
    }
    proc = make(
        driver,
        config(bootstrap, None, **settings),
        [topic],
        handle,
        retry=RetryTopics(delays=[0.2]),
        producer_config={"message.timeout.ms": 2000, "reconnect.backoff.max.ms": 200},
        commit_interval=0.1,
        tracer_provider=tracing,
        meter_provider=MeterProvider(metric_readers=[reader]),
    )
    running = Running(proc)
    try:
        wait_for(
            lambda: _sums(reader).get("kheaders.processing.publish.failures", 0) >= 1,
            what="the retry's publication to fail",
        )
        proxy.refuse(False)
        dead = read_all(bootstrap, f"{topic}-dlt", 1)
        wait_for(lambda: ("commit", 10) in events, what="everything committed")
    finally:
        running.stop()
    handled = [v for what, v in events if what == "handled"]
    assert handled.count(b"v5") == 2  # handled again once its failure could not be published
    second_v5 = [i for i, e in enumerate(events) if e == ("handled", b"v5")][1]
    early = [o for what, o in events[:second_v5] if what == "commit"]
    assert all(o <= 5 for o in early)  # nothing committed past it before then
    assert [d.value for d in dead] == [b"v9"]

    sums = _sums(reader)
    assert sums["kheaders.processing.failures"] >= 3  # v5 once, v9 on the topic and retry
    assert sums["kheaders.processing.retries"] == 1  # v9 (v5's publication failed)
    assert sums["kheaders.processing.dead_letters"] == 1
    assert sums["messaging.process.duration"] >= 11
    finished = spans.get_finished_spans()
    on_topic = [s for s in finished if s.name == f"process {topic}"]
    assert len(on_topic) >= 11
    for span in finished:
        assert [format(link.context.trace_id, "032x") for link in span.links] == [TRACE_ID]
    retried = [s for s in finished if s.name == f"process {topic}-retry"]
    assert [s.attributes["kheaders.attempt"] for s in retried] == [2]  # type: ignore[index]
