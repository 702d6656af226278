"""docs/spark.md and docs/spark-sql.md: every example runs on local Spark and the real broker
and does what its text says (listed in tests/docs/test_docs_examples.py's EXAMPLES).

Each document's examples run in order in one namespace. The broker, topics and paths are the
test's: ``127.0.0.1:9092`` becomes the test broker, topic names get a unique suffix, and the
example's directories (``/data/orders``, ``/chk/orders``, ``/tmp/chk``) move under tmp_path.
``SparkSession.builder...getOrCreate()`` in an example returns the suite's session.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from kheaders.broker import create_topic
from tests.spark.kafka_helpers import consume_all

ROOT = Path(__file__).resolve().parents[2]
TRACEPARENT = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(), re.S)


def _localised(code: str, suffix: str, tmp: Path) -> str:
    code = code.replace('"127.0.0.1:9092"', "BOOTSTRAP")
    for name in ("orders-state", "orders-copy", "orders"):
        code = re.sub(rf'"{name}"', f'"{name}-{suffix}"', code)
    for path in ("/data/orders", "/chk/orders", "/tmp/chk"):
        code = code.replace(f'"{path}"', repr(str(tmp / path.strip("/").replace("/", "-"))))
    return code


def _run(
    doc: str, steps: list[tuple[str, str]], namespace: dict[str, Any], suffix: str, tmp: Path
) -> None:
    for index, (code, (prelude, check)) in enumerate(zip(_blocks(doc), steps, strict=True)):
        for part, text in (("prelude", prelude), ("", code), ("check", check)):
            name = f"{doc} example {index}" + (f" ({part})" if part else "")
            exec(compile(_localised(text, suffix, tmp), name, "exec"), namespace)


def _seed(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(
        topic,
        b"v1",
        b"k1",
        headers=[("traceparent", TRACEPARENT), ("version", (2).to_bytes(8, "big"))],
    )
    producer.produce(topic, b"v2", b"k1", headers=[("version", (1).to_bytes(8, "big"))])
    assert producer.flush(15) == 0


@pytest.mark.integration
def test_spark_md_examples(spark: Any, bootstrap: str, tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:8]
    _seed(bootstrap, f"orders-{suffix}")
    create_topic(bootstrap, f"orders-copy-{suffix}")
    namespace: dict[str, Any] = {"__name__": "spark_doc", "BOOTSTRAP": bootstrap}
    steps = [
        ("", "assert df.count() == 2\n"),
        (
            "",
            "q.awaitTermination(120)\n"
            'rows = spark.read.parquet("/data/orders").orderBy("offset").collect()\n'
            'assert [r.value for r in rows] == [b"v1", b"v2"]\n'
            'assert rows[0].headers[0].key == "traceparent"\n',
        ),
        ("", ""),
    ]
    _run("docs/spark.md", steps, namespace, suffix, tmp_path)
    copied = consume_all(bootstrap, f"orders-copy-{suffix}", 1, 2)
    assert sorted(m.value() for m in copied) == [b"v1", b"v2"]
    assert any(m.headers() and m.headers()[0] == ("traceparent", TRACEPARENT) for m in copied)


@pytest.mark.integration
def test_spark_sql_md_examples(spark: Any, bootstrap: str, tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:8]
    _seed(bootstrap, f"orders-{suffix}")
    create_topic(bootstrap, f"orders-state-{suffix}", partitions=6)
    namespace: dict[str, Any] = {"__name__": "spark_sql_doc", "BOOTSTRAP": bootstrap}
    steps = [
        (
            "",
            'rows = df.select(header_long("headers", "version").alias("version"),'
            ' trace_id("headers").alias("trace")).collect()\n'
            "assert [(r.version, r.trace) for r in rows] =="
            ' [(2, "4bf92f3577b34da6a3ce929d0e0e4736"), (1, None)]\n'
            'winners = compact(df, "header", header="version").collect()\n'
            'assert [r.value for r in winners] == [b"old"]\n',
        ),
        (
            "",
            "rows = spark.sql(\"SELECT header_long(headers, 'version') AS v,"
            " trace_id(headers) AS t,"
            " header_text(with_header(headers, 'client.id', CAST('svc' AS BINARY)), 'client.id')"
            ' AS c FROM records").collect()\n'
            "assert [(r.v, r.t, r.c) for r in rows] =="
            " [(2, '4bf92f3577b34da6a3ce929d0e0e4736', 'svc'), (1, None, 'svc')]\n",
        ),
        (
            "from kheaders.spark import register\n"
            "register(spark)\n"
            "bs = BOOTSTRAP\n"
            'stream_df = (spark.readStream.format("kheaders")\n'
            '             .option("kafka.bootstrap.servers", bs)\n'
            '             .option("subscribe", "orders").option("startingOffsets", "earliest")\n'
            '             .option("includeHeaders", "true").load())\n',
            "for query in spark.streams.active:\n"
            "    query.processAllAvailable()\n"
            "    query.stop()\n",
        ),
    ]
    _run("docs/spark-sql.md", steps, namespace, suffix, tmp_path)
    state = consume_all(bootstrap, f"orders-state-{suffix}", 6, 1)
    assert [(m.key(), m.value()) for m in state] == [(b"k1", b"v1")]  # version 2 wins
