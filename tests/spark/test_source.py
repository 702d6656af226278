"""Batch reads through the ``kheaders`` data source, on the real broker, and its building blocks."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import (
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_NOT_AVAILABLE,
    Message,
    Producer,
)
from pyspark.sql import SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from kheaders import BrokerUnavailableError, ConfigurationError
from kheaders.spark import (
    DataLossError,
    KafkaDataSource,
    TopicNotFoundError,
    arrow_schema,
    kafka_connector_available,
    kafka_schema,
    read_kafka,
    register,
)
from kheaders.spark._arrow import BatchBuilder
from kheaders.spark._offsets import OffsetRange, OffsetReader, check_start, rate_limit, split
from kheaders.spark._options import READ_OPTIONS, sink_options, source_options
from kheaders.spark._reader import read_range
from tests.spark.kafka_helpers import consume_all, produce

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]

HEADER_CASES: list[list[tuple[str, bytes | None]] | None] = [
    [("trace", b"t1"), ("dup", b"first"), ("dup", b"second")],
    None,
    [("nullv", None), ("empty", b""), ("k\u00e9y", b"\x00\xff")],
]


def _reader(spark: SparkSession, bootstrap: str, **options: str):  # type: ignore[no-untyped-def]
    register(spark)
    return (
        spark.read.format("kheaders")
        .option("kafka.bootstrap.servers", bootstrap)
        .options(**options)
    )


def test_importing_kheaders_does_not_import_pyspark() -> None:
    code = "import sys, kheaders, kheaders.broker; print('pyspark' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "False"


# --- pieces that need no broker -------------------------------------------------------------


@pytest.mark.parametrize("include", [True, False])
def test_arrow_schema_equals_what_spark_expects(include: bool) -> None:
    assert arrow_schema(include).equals(to_arrow_schema(kafka_schema(include), timezone="UTC"))
    assert all(f.nullable for f in kafka_schema(include).fields)


def test_batch_builder_maps_timestamp_types_to_java_numbering_and_keeps_headers() -> None:
    messages = [
        Message(
            topic="t",
            partition=3,
            offset=10,
            key=b"k",
            value=b"v",
            headers=[("a", b"1"), ("a", None)],
            timestamp=(TIMESTAMP_CREATE_TIME, 1700),
        ),
        Message(
            topic="t",
            partition=3,
            offset=12,
            key=None,
            value=None,
            headers=None,
            timestamp=(TIMESTAMP_LOG_APPEND_TIME, 1800),
        ),
        Message(
            topic="t",
            partition=3,
            offset=13,
            key=b"x",
            value=b"y",
            headers=[],
            timestamp=(TIMESTAMP_NOT_AVAILABLE, 0),
        ),
        Message(topic="t", partition=3, offset=20, value=b"past the end", timestamp=(1, 5)),
    ]
    builder = BatchBuilder("t", 3, include_headers=True)
    assert builder.add(messages, end=14 + 1) == 20  # the record past the end reports it
    batch = builder.build()
    assert batch.schema.equals(arrow_schema(True))
    rows = batch.to_pylist()
    assert [r["offset"] for r in rows] == [10, 12, 13]
    assert [r["timestampType"] for r in rows] == [0, 1, -1]
    assert rows[0]["timestamp"].timestamp() == 1.7
    assert rows[2]["timestamp"] is None
    assert rows[0]["headers"] == [{"key": "a", "value": b"1"}, {"key": "a", "value": None}]
    assert rows[1]["headers"] is None
    assert rows[2]["headers"] == []
    assert {r["topic"] for r in rows} == {"t"}
    assert {r["partition"] for r in rows} == {3}
    assert builder.build().num_rows == 0


def test_options_need_exactly_one_subscription_and_reject_source_controlled_settings() -> None:
    base = {"kafka.bootstrap.servers": "127.0.0.1:1"}
    with pytest.raises(ConfigurationError, match="exactly one of"):
        source_options(base, streaming=False)
    with pytest.raises(ConfigurationError, match="exactly one of"):
        source_options({**base, "subscribe": "a", "assign": '{"a": [0]}'}, streaming=False)
    for name in ("auto.offset.reset", "enable.auto.commit"):
        with pytest.raises(ConfigurationError, match=name):
            source_options({**base, "subscribe": "a", f"kafka.{name}": "x"}, streaming=False)
    with pytest.raises(ConfigurationError, match="startingTimestamp"):
        source_options({**base, "subscribe": "a", "startingtimestamp": "1"}, streaming=False)
    with pytest.raises(ConfigurationError, match=r"bootstrap\.servers"):
        source_options({"subscribe": "a"}, streaming=False)
    with pytest.raises(ConfigurationError, match="startingOffsets"):
        source_options({**base, "subscribe": "a", "startingOffsets": "{bad"}, streaming=False)
    with pytest.raises(ConfigurationError, match="latest"):
        source_options({**base, "subscribe": "a", "startingOffsets": "latest"}, streaming=False)
    with pytest.raises(ConfigurationError, match="endingOffsets"):
        source_options({**base, "subscribe": "a", "endingOffsets": "latest"}, streaming=True)
    parsed = source_options(
        {**base, "assign": '{"a": [1, 0]}', "startingOffsets": '{"a": {"0": 5, "1": -2}}'},
        streaming=False,
    )
    assert parsed.starting == {"a": {0: 5, 1: -2}}
    assert parsed.ending == "latest"


def test_rate_limit_splits_proportionally_and_never_exceeds_the_limit() -> None:
    start = {("t", 0): 0, ("t", 1): 100, ("t", 2): 7}
    end = {("t", 0): 900, ("t", 1): 190, ("t", 2): 17}
    capped = rate_limit(start, end, 100)
    taken = {tp: capped[tp] - start[tp] for tp in start}
    assert sum(taken.values()) == 100
    assert taken[("t", 0)] == 90
    assert taken[("t", 1)] == 9
    assert rate_limit(start, end, 10_000) == end
    assert sum(rate_limit(start, end, 1)[tp] - start[tp] for tp in start) == 1


def test_split_covers_each_offset_once_and_drops_empty_ranges() -> None:
    ranges = [OffsetRange("t", 0, 0, 1000), OffsetRange("t", 1, 5, 5), OffsetRange("t", 2, 0, 3)]
    parts = split(ranges, 8)
    covered = sorted((r.partition, o) for r in parts for o in range(r.start, r.end))
    assert covered == [(0, o) for o in range(1000)] + [(2, o) for o in range(3)]
    assert len(parts) >= 8


def test_check_start_fails_or_skips_offsets_below_the_log_start() -> None:
    marks = {("t", 0): (50, 100)}
    with pytest.raises(DataLossError, match="t-0"):
        check_start({("t", 0): 10}, marks, fail_on_data_loss=True)
    assert check_start({("t", 0): 10}, marks, fail_on_data_loss=False) == {("t", 0): 50}


# --- on the real broker -----------------------------------------------------------------------


def test_batch_read_returns_headers_null_values_duplicates_and_null_for_none(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    records = [(i % 2, f"k{i}".encode(), f"v{i}".encode(), HEADER_CASES[i % 3]) for i in range(12)]
    produce(bootstrap, topic, records)
    df = _reader(spark, bootstrap, subscribe=topic, includeHeaders="true").load()
    assert df.schema == kafka_schema(True)
    rows = df.collect()
    assert len(rows) == 12
    by_key = {r.key: r for r in rows}
    for partition, key, value, headers in records:
        row = by_key[key]
        assert (row.value, row.topic, row.partition) == (value, topic, partition)
        assert row.timestampType == 0
        assert row.timestamp is not None
        if headers is None:
            assert row.headers is None
        else:
            assert [(h.key, h.value) for h in row.headers] == headers
    offsets = sorted((r.partition, r.offset) for r in rows)
    assert offsets == [(p, o) for p in (0, 1) for o in range(6)]
    plain = _reader(spark, bootstrap, subscribe=topic).load()
    assert "headers" not in plain.columns
    assert plain.count() == 12


def test_starting_and_ending_offsets_json_bound_each_partition(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    produce(bootstrap, topic, [(i % 2, None, str(i).encode(), None) for i in range(20)])
    df = _reader(
        spark,
        bootstrap,
        assign=f'{{"{topic}": [0, 1]}}',
        startingOffsets=f'{{"{topic}": {{"0": 2, "1": -2}}}}',
        endingOffsets=f'{{"{topic}": {{"0": 5, "1": -1}}}}',
    ).load()
    got = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    assert got == [(0, 2), (0, 3), (0, 4)] + [(1, o) for o in range(10)]
    with pytest.raises(Exception, match="every subscribed partition"):
        _reader(
            spark, bootstrap, subscribe=topic, startingOffsets=f'{{"{topic}": {{"0": 1}}}}'
        ).load().collect()


def test_min_partitions_splits_ranges_and_reads_every_record_once(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    produce(bootstrap, topic, [(i % 2, None, str(i).encode(), None) for i in range(400)])
    df = _reader(spark, bootstrap, subscribe=topic, minPartitions="6").load()
    assert df.rdd.getNumPartitions() >= 6
    values = sorted(int(r.value) for r in df.select("value").collect())
    assert values == list(range(400))


def test_subscribe_pattern_reads_every_matching_topic_only(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    first, second, other = topic_factory(), topic_factory(), topic_factory()
    for name in (first, second, other):
        produce(bootstrap, name, [(0, None, name.encode(), None)])
    pattern = "|".join([first, second]).replace(".", r"\.")
    rows = _reader(spark, bootstrap, subscribePattern=pattern).load().collect()
    assert sorted(r.topic for r in rows) == sorted([first, second])
    assert all(r.value == r.topic.encode() for r in rows)


def test_read_kafka_falls_back_to_kheaders_without_the_jvm_connector(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    assert not kafka_connector_available(spark)  # the PyPI wheel ships no Kafka connector
    with pytest.raises(Exception, match="KAFKA_DATA_SOURCE_NOT_ENABLED"):
        spark.read.format("kafka").option("subscribe", "x").load()
    topic = topic_factory()
    produce(bootstrap, topic, [(0, b"k", b"v", [("h", b"1")])])
    df = read_kafka(
        spark,
        **{"kafka.bootstrap.servers": bootstrap, "subscribe": topic, "includeHeaders": "true"},
    ).load()
    [row] = df.collect()
    assert (row.key, row.value, [(h.key, h.value) for h in row.headers]) == (
        b"k",
        b"v",
        [("h", b"1")],
    )
    assert KafkaDataSource.name() == "kheaders"


def test_empty_topic_reads_no_rows(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    df = _reader(spark, bootstrap, subscribe=topic).load()
    assert df.count() == 0


@pytest.mark.parametrize("fail", [True, False])
def test_task_reading_offsets_missing_from_the_log_fails_or_skips_by_fail_on_data_loss(
    bootstrap: str, topic_factory: Callable[..., str], fail: bool
) -> None:
    topic = topic_factory()
    produce(bootstrap, topic, [(0, None, b"x", None)] * 3)
    options = source_options(
        {
            "kafka.bootstrap.servers": bootstrap,
            "subscribe": topic,
            "failOnDataLoss": str(fail).lower(),
            "kafkaConsumer.pollTimeoutMs": "20000",
        },
        streaming=False,
    )
    missing = OffsetRange(topic, 0, 100, 105)  # a range the log no longer (never) holds
    if fail:
        with pytest.raises(DataLossError, match=f"{topic}-0"):
            list(read_range(options, missing))
    else:
        assert list(read_range(options, missing)) == []
    batches = list(read_range(options, OffsetRange(topic, 0, 1, 3)))
    assert [o for b in batches for o in b.column("offset").to_pylist()] == [1, 2]


def test_transaction_markers_and_aborted_records_end_ranges_without_waiting(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic})
    producer.init_transactions(30)
    for txn, commit in (("a", True), ("x", False), ("b", True)):
        producer.begin_transaction()
        for i in range(3):
            producer.produce(topic, f"{txn}{i}".encode(), partition=0)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    del producer
    # Each commit leaves a control record; the log has offsets no consumer ever sees.
    visible = consume_all(bootstrap, topic, 1, expected=6)
    assert [m.value() for m in visible] == [b"a0", b"a1", b"a2", b"b0", b"b1", b"b2"]
    assert visible[-1].offset() > 5
    df = _reader(
        spark,
        bootstrap,
        subscribe=topic,
        minPartitions="6",
        **{"kafkaConsumer.pollTimeoutMs": "15000"},
    ).load()
    rows = df.select("offset", "value").collect()
    assert sorted((r.offset, r.value) for r in rows) == [(m.offset(), m.value()) for m in visible]


# --- issue 14: strict about what does not exist, and about options -------------------------


def test_batch_read_of_a_missing_topic_fails_naming_it(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    present = topic_factory()
    missing = f"no-such-topic-{uuid.uuid4().hex[:8]}"
    with pytest.raises(Exception, match=f"topic '{missing}' does not exist"):
        _reader(spark, bootstrap, subscribe=f"{present},{missing}").load().collect()
    # an empty pattern match stays empty, as in Spark
    assert _reader(spark, bootstrap, subscribePattern=f"{missing}.*").load().count() == 0


def test_assign_of_a_missing_topic_or_partition_names_both(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    present = topic_factory(partitions=2)
    base = {"kafka.bootstrap.servers": bootstrap, "kafka.default.api.timeout.ms": "10000"}
    cases = {
        f'{{"no-such-{present}": [3]}}': rf"topic 'no-such-{present}' \(partition 3\)",
        f'{{"{present}": [0, 5]}}': f"partition 5 of topic '{present}' does not exist",
    }
    for assign, message in cases.items():
        reader = OffsetReader(source_options({**base, "assign": assign}, streaming=False))
        try:
            with pytest.raises(TopicNotFoundError, match=message):
                reader.topic_partitions(strict=True)
        finally:
            reader.close()


def test_unreachable_bootstrap_is_named_within_the_time_bound_and_stderr_stays_quiet(
    capfd: pytest.CaptureFixture[str],
) -> None:
    options = source_options(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "subscribe": "t",
            "kafka.default.api.timeout.ms": "1500",
        },
        streaming=False,
    )
    reader = OffsetReader(options)
    started = time.monotonic()
    try:
        with pytest.raises(BrokerUnavailableError) as caught:
            reader.topic_partitions(strict=True)
    finally:
        reader.close()
    # the 1.5 s bound, not the 30 s default: 20 s tells them apart on a busy machine too
    assert time.monotonic() - started < 20
    message = str(caught.value)
    assert "'127.0.0.1:1'" in message
    assert "kafka.default.api.timeout.ms" in message
    assert "1500 ms" in message
    assert "Connect" not in capfd.readouterr().err  # librdkafka's lines went to the logger


def test_max_records_per_partition_splits_every_range_and_reads_each_record_once(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    ranges = [OffsetRange("t", 0, 3, 25), OffsetRange("t", 1, 0, 4)]
    parts = split(ranges, None, 10)
    assert [(r.partition, r.start, r.end) for r in parts] == [
        (0, 3, 13),
        (0, 13, 23),
        (0, 23, 25),
        (1, 0, 4),
    ]
    assert max(r.end - r.start for r in split(ranges, 8, 3)) <= 3
    topic = topic_factory(partitions=2)
    produce(bootstrap, topic, [(i % 2, None, str(i).encode(), None) for i in range(50)])
    df = _reader(spark, bootstrap, subscribe=topic, maxRecordsPerPartition="7").load()
    assert df.rdd.getNumPartitions() == 8  # 25 offsets per partition: 7+7+7+4, twice
    assert sorted(int(r.value) for r in df.select("value").collect()) == list(range(50))


# Every option of Spark 4.x's Kafka connector (KafkaSourceProvider), by its documented name.
SPARK_KAFKA_OPTIONS = (
    "assign",
    "subscribe",
    "subscribePattern",
    "startingOffsets",
    "endingOffsets",
    "startingOffsetsByTimestamp",
    "endingOffsetsByTimestamp",
    "startingTimestamp",
    "endingTimestamp",
    "startingOffsetsByTimestampStrategy",
    "failOnDataLoss",
    "minPartitions",
    "maxRecordsPerPartition",
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "fetchOffset.numRetries",
    "fetchOffset.retryIntervalMs",
    "kafkaConsumer.pollTimeoutMs",
    "groupIdPrefix",
    "includeHeaders",
)
_SAMPLE_VALUES = {
    "assign": '{"t": [0]}',
    "subscribePattern": "t.*",
    "startingOffsets": "earliest",
    "endingOffsets": "latest",
    "failOnDataLoss": "false",
    "includeHeaders": "true",
    "groupIdPrefix": "p",
}


@pytest.mark.parametrize("name", SPARK_KAFKA_OPTIONS)
def test_every_spark_kafka_option_is_implemented_or_refused_by_name(name: str) -> None:
    options = {"kafka.bootstrap.servers": "127.0.0.1:1", name: _SAMPLE_VALUES.get(name, "5")}
    if name not in ("assign", "subscribePattern"):
        options.setdefault("subscribe", "t")
    if name == "subscribe":
        options["subscribe"] = "t"
    implemented = name.lower() in {n.lower() for n in READ_OPTIONS}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a known option is never "unknown"
        if implemented:
            source_options(options, streaming=False)
        else:
            with pytest.raises(ConfigurationError, match=f"'{name}' .*not supported"):
                source_options(options, streaming=False)


def test_unknown_option_warns_naming_the_closest_known_one() -> None:
    base = {"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t"}
    with pytest.warns(UserWarning, match=r"'startingOffset'.*did you mean 'startingOffsets'"):
        source_options({**base, "startingOffset": "earliest"}, streaming=False)
    schema = StructType([StructField("value", StringType())])
    with (
        pytest.warns(UserWarning, match=r"'topik'.*did you mean 'topic'"),
        pytest.raises(ConfigurationError, match="'topic' option"),
    ):
        sink_options({"kafka.bootstrap.servers": "127.0.0.1:1", "topik": "t"}, schema)


def test_batch_starting_offsets_past_the_end_of_the_log_fail_as_in_spark(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    produce(bootstrap, topic, [(0, None, b"x", None)] * 3)
    df = _reader(spark, bootstrap, subscribe=topic, startingOffsets=f'{{"{topic}": {{"0": 500}}}}')
    with pytest.raises(Exception, match=f"offset 500 of {topic}-0 is past the end of the log"):
        df.load().collect()


def test_read_kafka_warns_about_unknown_options_in_the_callers_process(
    spark: SparkSession,
) -> None:
    with pytest.warns(UserWarning, match=r"'maxOffsetPerTrigger'.*'maxOffsetsPerTrigger'"):
        read_kafka(
            spark,
            streaming=True,
            **{"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t"},
            maxOffsetPerTrigger="10",
        )
