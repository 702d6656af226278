"""The Spark data source over SASL_SSL: librdkafka's keys as ``kafka.*`` options, as Spark's
own connector takes the Java client's; a refused password named, never shown (the sink takes
the same ``kafka.*`` options through the same code, :func:`kafka_config`)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")

from pyspark.sql import SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from kheaders import BrokerUnavailableError, Producer
from kheaders.spark import HEADERS_TYPE, register
from kheaders.spark._offsets import OffsetReader
from kheaders.spark._options import sink_options, source_options
from tests.spark.conftest import spark  # noqa: F401 - the suite's one SparkSession
from tests.support.security import PASSWORD

pytestmark = [pytest.mark.integration, pytest.mark.spark]

HEADERS = [("tenant", b"acme"), ("dup", b"1"), ("dup", None)]
SCHEMA = StructType(
    [
        StructField("key", StringType()),
        StructField("value", StringType()),
        StructField("headers", HEADERS_TYPE),
    ]
)


def _options(settings: dict[str, object]) -> dict[str, str]:
    return {f"kafka.{k}": str(v) for k, v in settings.items()}


def test_source_reads_headers_over_sasl_scram(
    spark: SparkSession,  # noqa: F811 - the fixture imported above
    secured: Callable[[str], dict[str, object]],
    secure_topic: str,
) -> None:
    settings = secured("scram")
    producer = Producer(settings)
    producer.produce(secure_topic, b"v1", b"k1", headers=HEADERS)
    assert producer.flush(30) == 0
    register(spark)
    read = (
        spark.read.format("kheaders")
        .options(**_options(settings))
        .option("subscribe", secure_topic)
        .option("includeHeaders", "true")
        .load()
        .selectExpr("CAST(key AS STRING) k", "CAST(value AS STRING) v", "headers")
        .collect()
    )
    assert [(r.k, r.v, [(h.key, h.value) for h in r.headers]) for r in read] == [
        ("k1", "v1", HEADERS)
    ]


def test_options_reprs_never_show_the_password(
    secured: Callable[[str], dict[str, object]],
) -> None:
    options = _options(secured("plain"))
    read = source_options({**options, "subscribe": "t"}, streaming=False)
    write = sink_options({**options, "topic": "t"}, SCHEMA)
    assert read.conf["sasl.password"] == PASSWORD  # carried to the executors...
    assert PASSWORD not in repr(read)  # ...never shown
    assert PASSWORD not in repr(write)


def test_a_refused_password_is_named_with_the_bootstrap_servers(
    secured: Callable[[str], dict[str, object]],
) -> None:
    wrong = "wrong-spark-pw"
    settings = {**secured("scram"), "sasl.password": wrong, "default.api.timeout.ms": 3000}
    reader = OffsetReader(source_options({**_options(settings), "subscribe": "t"}, streaming=False))
    started = time.monotonic()
    try:
        with pytest.raises(BrokerUnavailableError) as caught:
            reader.topic_partitions(strict=True)
    finally:
        reader.close()
    message = str(caught.value)
    assert f"'{settings['bootstrap.servers']}'" in message
    assert "SASL authentication error" in message
    assert wrong not in message
    assert PASSWORD not in message
    assert time.monotonic() - started < 30  # the 3 s bound, not the 30 s default
