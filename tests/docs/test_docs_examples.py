"""Every python example in README.md and docs/*.md runs against the real broker and does
what its text says.

Each document's examples run in order in one namespace, as a reader would paste them.
``EXAMPLES`` lists every block of every document, in order: run here (``Run``: the names
the surrounding text assumes are defined first, then what the text says the example does is
asserted), or run by a named test elsewhere (``Elsewhere``). A block that is in no list
fails ``test_every_example_is_accounted_for``, so a new example cannot go untested.

The broker address, topic and group names are the test's: ``localhost:9092`` becomes the
test broker, and each document's topic names get a unique suffix, so runs never share data;
confluent's in-memory Schema Registry (``mock://``) stands in for the one at localhost:8081.
Subscribing consumers join quickly (Tansu takes 23 s with librdkafka's defaults).
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from kheaders import Headers
from kheaders.broker import create_topic

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
FAST_GROUP = '"session.timeout.ms": 6000, "heartbeat.interval.ms": 500'


class Until:
    """A ``running`` flag that turns false after ``seconds``: a lost record fails, not hangs."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def __bool__(self) -> bool:
        return time.monotonic() < self.deadline


@dataclass(frozen=True)
class Run:
    """Run the block here: ``prelude`` first, then the block, then ``check``."""

    prelude: str = ""
    check: str = ""


@dataclass(frozen=True)
class Elsewhere:
    """The block is run by ``test`` (a file under tests/ that names the document)."""

    test: str


DOCTESTS = Elsewhere("tests/docs/test_doctests.py")
"""Instead of a list: every block of the document is a ``>>>`` session that doctest runs."""


def blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(), re.S)


EXAMPLES: dict[str, list[Run | Elsewhere] | Elsewhere] = {
    "README.md": [
        Elsewhere("tests/docs/test_readme.py"),
        Run(
            prelude=f"""
import confluent_kafka
create_topic(BOOTSTRAP, "orders")
existing_confluent_producer = confluent_kafka.Producer({{"bootstrap.servers": BOOTSTRAP}})
existing_confluent_consumer = confluent_kafka.Consumer({{
    "bootstrap.servers": BOOTSTRAP, "group.id": "readme", "auto.offset.reset": "earliest",
    {FAST_GROUP}}})
existing_confluent_consumer.subscribe(["orders"])
""",
            check="""
assert msg.value() == {"id": 7}
assert msg.key() == b"order-7"
assert msg.headers().last_value("content-type") == b"application/json"
assert msg.headers().last_value("tenant") == b"acme"
assert msg.headers().read_only
consumer.close()
""",
        ),
        Run(
            check="""
names = [type(i).__name__ for i in producer.interceptors.interceptors]
assert names == ["TracingProducerInterceptor", "ClientIdInterceptor"]
producer.produce("orders", b"from config")
producer.close()
(msg,) = read_back("orders", 2)[1:]
assert msg.value() == b"from config"
assert msg.headers().last_value("client.id") == b"orders-service"
""",
        ),
        Run(
            prelude="""
from confluent_kafka import Message
from kheaders.compaction import encode_version
messages = [
    Message(topic="t", partition=0, offset=o, key=b"k", value=v, timestamp=(1, 0),
            headers=[("version", encode_version(n))])
    for o, (v, n) in enumerate([(b"v2", 2), (b"v1", 1)])
]
""",
            check="""
assert set(state) == {b"k"}
assert state[b"k"].value() == b"v2"   # the higher version wins over the later offset
""",
        ),
    ],
    "docs/aio.md": [
        *[Elsewhere("tests/docs/test_docs_aio.py")] * 2,
        Elsewhere("tests/docs/test_docs_shutdown.py"),
        Elsewhere("tests/docs/test_docs_aio.py"),
    ],
    "docs/cloudevents.md": [Elsewhere("tests/cloudevents/test_docs.py")] * 11
    + [Elsewhere("tests/spark/test_cloudevents.py")],
    "docs/architecture.md": [],
    "docs/clients.md": [
        Elsewhere("tests/docs/test_docs_clients.py"),
        Run(
            prelude="""
import kheaders
existing = confluent_kafka.Producer({"bootstrap.servers": BOOTSTRAP})
""",
            check="""
from opentelemetry.sdk.trace import TracerProvider
names = [type(i).__name__ for i in producer.interceptors.interceptors]
assert names == ["TracingProducerInterceptor"]
create_topic(BOOTSTRAP, "orders" + "-wrapped")
with TracerProvider().get_tracer("app").start_as_current_span("checkout"):
    producer.produce("orders" + "-wrapped", b"v")
producer.close()
(msg,) = read_back("orders" + "-wrapped", 1)
assert msg.headers().last_header("traceparent") is not None
""",
        ),
        Elsewhere("tests/docs/test_docs_shutdown.py"),
        Run(
            prelude="""
import kheaders
create_topic(BOOTSTRAP, "orders")
create_topic(BOOTSTRAP, "orders" + "-dlt")
producer = kheaders.Producer({"bootstrap.servers": BOOTSTRAP})
producer.produce("orders", b"not json", headers=[("trace", b"abc")])
producer.produce("orders", b'{"id": 1}')
producer.flush(10)
consumer = kheaders.Consumer(
    {"bootstrap.servers": BOOTSTRAP, "group.id": "billing"},
    value_deserializer=kheaders.JsonDeserializer(),
)
consumer.assign([TopicPartition("orders", 0, OFFSET_BEGINNING)])
running = Until(30)   # the application's flag; handle() clears it
handled = []

def handle(msg):
    global running
    handled.append(msg.value())
    running = False
""",
            check="""
assert handled == [{"id": 1}]
(dead,) = read_back("orders" + "-dlt", 1)
assert dead.value() == b"not json"
assert list(dead.headers())[0] == ("trace", b"abc")
assert dict(dead.headers())["kheaders.dlt.original.topic"] == "orders".encode()
assert consumer.committed([TopicPartition("orders", 0)])[0].offset == 2  # the poison too
consumer.close()
producer.close()
""",
        ),
    ],
    "docs/compaction.md": [
        Run(),
        Run(
            prelude="""
from kheaders.compaction import encode_version
bootstrap = BOOTSTRAP
create_topic(BOOTSTRAP, "accounts")
_p = confluent_kafka.Producer({"bootstrap.servers": BOOTSTRAP})
for key, value, version in [(b"alice", b"100", 2), (b"alice", b"90", 1), (b"bob", b"5", 1)]:
    _p.produce("accounts", value, key, headers=[("version", encode_version(version))])
_p.flush(10)
""",
            check="""
assert balance == b"100"          # version 2 wins over the later version 1
assert len(state) == 2
assert b"bob" in state
""",
        ),
        Run(
            check="""
from kheaders import ProducerRecord
from kheaders.values import LONG
stamped = stamp.on_send(ProducerRecord("accounts", {"seq": 5}))
assert stamped.headers.last_value("version", LONG) == 5
""",
        ),
        Run(
            check="""
(last,) = read_back("accounts", 4)[3:]
assert last.key() == b"alice"
assert last.headers().last_header("rev") is not None   # the clock version, in "rev"
""",
        ),
        Run(),
    ],
    "docs/demo.md": [
        Run(
            prelude="""
import kheaders
from opentelemetry.sdk.trace import TracerProvider
bootstrap = BOOTSTRAP
create_topic(BOOTSTRAP, "orders")
tracer = TracerProvider().get_tracer("demo")
key = "order-1"
""",
            check="""
producer.close()
(msg,) = read_back("orders", 1)
assert {"traceparent", "client.id", "correlation.id", "version"} <= set(dict(msg.headers()))
assert msg.value() == b'{"order":"order-1","status":"created"}'
""",
        ),
    ],
    "docs/guarantees.md": [],
    "docs/headers.md": DOCTESTS,
    "docs/index.md": [],
    "docs/interceptors.md": [
        Run(
            check="""
import kheaders
create_topic(BOOTSTRAP, "orders")
from opentelemetry.sdk.trace import TracerProvider
producer = kheaders.Producer(config)
with TracerProvider().get_tracer("app").start_as_current_span("checkout"):
    producer.produce("orders", b"{}")
producer.close()
(msg,) = read_back("orders", 1)
assert {"traceparent", "client.id", "correlation.id"} <= set(dict(msg.headers())), msg.headers()
""",
        ),
        Run(
            check="""
assert record.headers.keys() == ["traceparent", "client.id", "app.name", "correlation.id"]
""",
        ),
        Run(
            prelude="""
import kheaders
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from kheaders.interceptors.correlation import current_correlation_id
_span = TracerProvider().get_tracer("app").start_as_current_span("checkout")
with _span, kheaders.Producer({
    "bootstrap.servers": BOOTSTRAP,
    "interceptor.classes": "kheaders.interceptors.tracing.TracingProducerInterceptor,"
                           "kheaders.interceptors.correlation.CorrelationIdInterceptor",
}) as _producer:
    _producer.produce("orders", b"order")
running = Until(30)   # the application's flag; handle() clears it
handled = []

def handle(msg):
    global running
    current = trace.get_current_span().get_span_context()
    handled.append((msg.headers().last_value("traceparent"), current, current_correlation_id()))
    running = False
""",
            check="""
((traceparent, current, correlation),) = handled
assert traceparent.decode().split("-")[1] == format(current.trace_id, "032x")  # same trace
assert correlation is not None
(sent,) = read_back("orders", 1)
assert sent.headers().last_value("correlation.id") == correlation.encode()
""",
        ),
        Elsewhere("tests/interceptors/test_metrics_docs.py"),
    ],
    "docs/logging.md": [Elsewhere("tests/docs/test_docs_logging.py")] * 4,
    "docs/mirror.md": [Elsewhere("tests/mirror/test_docs_mirror.py")] * 3
    + [Elsewhere("tests/mirror/test_spark_mirror.py")] * 2,
    "docs/protect.md": [Elsewhere("tests/protect/test_protect_docs.py")] * 4,
    "docs/security.md": [Elsewhere("tests/security/test_docs_security.py")] * 3,
    "docs/serde.md": [
        Elsewhere("tests/serde/test_serde.py"),
        Elsewhere("tests/serde/test_serde.py"),
        Elsewhere("tests/serde/test_serde.py"),
        Run(
            prelude="""
from kheaders import from_confluent
schema_str = '{"type": "object", "properties": {"id": {"type": "integer"}}}'
""",
            check="""
from kheaders import Headers
headers = Headers()
data = value_serializer.serialize("orders", headers, {"id": 1})
assert headers.last_header("__value_schema_id") is not None
assert data == b'{"id":1}' or data == b'{"id": 1}'    # no schema id in the payload
assert value_deserializer.deserialize("orders", headers.close(), data) == {"id": 1}
""",
        ),
        Run(
            prelude="""
create_topic(BOOTSTRAP, "orders")
""",
            check="""
(msg,) = read_back("orders", 1)
assert msg.key() == b"k1"
assert msg.value() == b'{"id":1}'
assert msg.headers().to_list() == [("content-type", b"application/json")]
""",
        ),
        Elsewhere("tests/serde/test_serde.py"),
    ],
    "docs/processing.md": [Elsewhere("tests/processing/test_docs_processing.py")] * 4,
    "docs/spark-cluster.md": [Elsewhere("tests/spark/test_docs_spark_cluster.py")],
    "docs/spark-sql.md": [Elsewhere("tests/spark/test_docs_spark.py")] * 3,
    "docs/spark.md": [Elsewhere("tests/spark/test_docs_spark.py")] * 3,
}


def test_every_example_is_accounted_for() -> None:
    assert sorted(EXAMPLES) == sorted(DOCS)
    for doc in DOCS:
        entries = EXAMPLES[doc]
        if entries == DOCTESTS:
            assert Path(doc).name in (ROOT / DOCTESTS.test).read_text()
            assert all(code.lstrip().startswith(">>> ") for code in blocks(doc)), doc
            continue
        assert isinstance(entries, list)
        assert len(entries) == len(blocks(doc)), f"{doc}: list its new example here"
        for entry in entries:
            if isinstance(entry, Elsewhere):
                assert Path(doc).name in (ROOT / entry.test).read_text(), (doc, entry.test)


def _localised(code: str, doc: str, suffix: str) -> str:
    """The broker is the test's; every quoted topic and group name gets this run's suffix."""
    code = code.replace("localhost:9092", "{BOOTSTRAP}").replace("127.0.0.1:9092", "{BOOTSTRAP}")
    code = code.replace('"{BOOTSTRAP}"', "BOOTSTRAP")
    code = code.replace(  # no Schema Registry here: confluent's in-memory one stands in
        'SchemaRegistryClient({"url": "http://localhost:8081"})',
        'SchemaRegistryClient.new_client({"url": "mock://docs"})',
    )
    for name in ("orders", "accounts-latest", "accounts", "billing", "readme"):
        code = re.sub(rf'"{re.escape(name)}"', f'"{name}-{suffix}"', code)
    code = code.replace('"group.id": "billing-', f'{FAST_GROUP}, "group.id": "billing-')
    return code


RUNNABLE = [
    doc
    for doc, entries in EXAMPLES.items()
    if isinstance(entries, list) and any(isinstance(e, Run) for e in entries)
]


@pytest.mark.integration
@pytest.mark.parametrize("doc", RUNNABLE)
def test_examples_run_and_do_what_the_text_says(doc: str, bootstrap: str) -> None:
    suffix = uuid.uuid4().hex[:8]
    opened: list[confluent_kafka.Consumer] = []

    def read_back(topic: str, count: int) -> list[confluent_kafka.Message]:
        reader = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "docs"})
        opened.append(reader)
        reader.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        out: list[confluent_kafka.Message] = []
        for _ in range(60):
            msg = reader.poll(0.5)
            if msg is not None and msg.error() is None:
                msg.set_headers(Headers.from_confluent(msg.headers(), read_only=True))  # type: ignore[arg-type]
                out.append(msg)
                if len(out) == count:
                    break
        assert len(out) == count, f"{topic}: read {len(out)} of {count}"
        return out

    namespace: dict[str, Any] = {
        "__name__": "docs_example",
        "BOOTSTRAP": bootstrap,
        "create_topic": create_topic,
        "read_back": read_back,
        "confluent_kafka": confluent_kafka,
        "TopicPartition": TopicPartition,
        "OFFSET_BEGINNING": OFFSET_BEGINNING,
        "Until": Until,
    }
    try:
        entries = EXAMPLES[doc]
        assert isinstance(entries, list)
        for index, (entry, code) in enumerate(zip(entries, blocks(doc), strict=True)):
            if not isinstance(entry, Run):
                continue
            for part, text in (("prelude", entry.prelude), ("", code), ("check", entry.check)):
                name = f"{doc} example {index}" + (f" ({part})" if part else "")
                exec(compile(_localised(text, doc, suffix), name, "exec"), namespace)
    finally:
        for reader in opened:
            reader.close()
