"""Batch writes through the ``kheaders`` sink, read back byte for byte by a confluent consumer."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from kheaders import ConfigurationError
from kheaders.spark import HEADERS_TYPE, kafka_writer, register
from kheaders.spark._options import sink_options
from tests.spark.kafka_helpers import consume_all

pytestmark = pytest.mark.spark

WRITE_SCHEMA = StructType(
    [
        StructField("key", StringType()),
        StructField("value", StringType()),
        StructField("headers", HEADERS_TYPE),
        StructField("partition", IntegerType()),
    ]
)


def _java_murmur2_partition(key: bytes, partitions: int) -> int:
    """Kafka's DefaultPartitioner/BuiltInPartitioner for a keyed record (Utils.murmur2)."""
    m, h = 0x5BD1E995, (0x9747B28C ^ len(key)) & 0xFFFFFFFF
    whole = len(key) & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(key[i : i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    rest = len(key) & 3
    if rest == 3:
        h ^= key[whole + 2] << 16
    if rest >= 2:
        h ^= key[whole + 1] << 8
    if rest >= 1:
        h ^= key[whole]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % partitions


def test_java_murmur2_reference_matches_kafkas_own_test_vector() -> None:
    # Kafka's UtilsTest: murmur2("21".getBytes()) == -973932308; toPositive & 0x7fffffff.
    assert _java_murmur2_partition(b"21", 2**31 - 1) == (-973932308 & 0x7FFFFFFF) % (2**31 - 1)


def test_batch_write_with_headers_reads_back_byte_for_byte(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    register(spark)
    topic = topic_factory(partitions=2)
    headers_cases = [
        [("dup", b"1"), ("dup", b"2"), ("nullv", None)],
        None,
        [("empty", b""), ("bin", b"\x00\xff\xfe")],
    ]
    rows = [(f"k{i}", f"v{i}", headers_cases[i % 3], i % 2) for i in range(9)]
    rows.append((None, None, None, None))  # a tombstone without key or headers
    spark.createDataFrame(rows, WRITE_SCHEMA).write.format("kheaders").option(
        "kafka.bootstrap.servers", bootstrap
    ).option("topic", topic).mode("append").save()

    got = consume_all(bootstrap, topic, 2, expected=len(rows))
    assert len(got) == len(rows)
    by_value = {m.value(): m for m in got}
    for key, value, headers, partition in rows:
        message = by_value[value.encode() if value else None]
        assert message.key() == (key.encode() if key else None)
        assert message.headers() == headers
        if partition is not None:
            assert message.partition() == partition


def test_keys_land_where_javas_murmur2_partitioner_puts_them(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    register(spark)
    topic = topic_factory(partitions=5)
    keys = [f"user-{i}" for i in range(40)]
    spark.createDataFrame([(k, k) for k in keys], "key string, value string").write.format(
        "kheaders"
    ).option("kafka.bootstrap.servers", bootstrap).option("topic", topic).mode("append").save()
    got = consume_all(bootstrap, topic, 5, expected=len(keys))
    assert len(got) == len(keys)
    placed = {m.key(): m.partition() for m in got}
    assert placed == {k.encode(): _java_murmur2_partition(k.encode(), 5) for k in keys}
    assert len(set(placed.values())) > 1


def test_write_fails_when_a_record_cannot_be_delivered(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    register(spark)
    topic = topic_factory(partitions=1)
    df = spark.createDataFrame([("k", "v", None, 7)], WRITE_SCHEMA)
    with pytest.raises(Exception, match="DeliveryError"):
        df.write.format("kheaders").option("kafka.bootstrap.servers", bootstrap).option(
            "kafka.message.timeout.ms", "5000"
        ).option("topic", topic).mode("append").save()


def test_sink_options_check_columns_and_topic() -> None:
    servers = {"kafka.bootstrap.servers": "127.0.0.1:1"}
    with pytest.raises(ConfigurationError, match="'value'"):
        sink_options({**servers, "topic": "t"}, StructType([StructField("key", StringType())]))
    with pytest.raises(ConfigurationError, match="topic"):
        sink_options(servers, StructType([StructField("value", StringType())]))
    with pytest.raises(ConfigurationError, match="'headers'"):
        sink_options(
            {**servers, "topic": "t"},
            StructType([StructField("value", StringType()), StructField("headers", StringType())]),
        )
    parsed = sink_options({**servers, "topic": "t"}, WRITE_SCHEMA)
    assert parsed.conf["partitioner"] == "murmur2_random"
    own = sink_options({**servers, "topic": "t", "kafka.partitioner": "random"}, WRITE_SCHEMA)
    assert own.conf["partitioner"] == "random"


def test_kafka_writer_saves_without_naming_a_mode_where_the_default_mode_cannot(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    """Spark refuses Python sinks its default mode ErrorIfExists; kafka_writer sets append."""
    register(spark)
    topic = topic_factory()
    df = spark.createDataFrame([("k", "v")], "key string, value string")
    plain = df.write.format("kheaders").option("kafka.bootstrap.servers", bootstrap)
    with pytest.raises(Exception, match="UNSUPPORTED_DATA_SOURCE_SAVE_MODE"):
        plain.option("topic", topic).save()
    kafka_writer(df).option("kafka.bootstrap.servers", bootstrap).option("topic", topic).save()
    [message] = consume_all(bootstrap, topic, 1, expected=1)
    assert (message.key(), message.value()) == (b"k", b"v")
