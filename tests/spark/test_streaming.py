"""Streaming reads and writes through the ``kheaders`` data source, on the real broker."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from kheaders.spark import KafkaDataSource, kafka_schema, register
from tests.spark.kafka_helpers import consume_all, produce

pytestmark = pytest.mark.spark


def _stream(spark: SparkSession, bootstrap: str, topic: str, **options: str) -> DataFrame:
    register(spark)
    return (
        spark.readStream.format("kheaders")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .options(**options)
        .load()
    )


def _run_available_now(df: DataFrame, checkpoint: Path) -> list[list[tuple[int, int, bytes]]]:
    """Run to the end of what is there now; return the rows of each micro-batch."""
    batches: list[list[tuple[int, int, bytes]]] = []

    def collect(batch: DataFrame, batch_id: int) -> None:
        rows = batch.select("partition", "offset", "value").collect()
        batches.append([(r.partition, r.offset, r.value) for r in rows])

    query = (
        df.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    return batches


def test_available_now_restart_from_checkpoint_loses_and_repeats_nothing_and_caps_batches(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory(partitions=2)
    produce(bootstrap, topic, [(i % 2, None, b"a%d" % i, None) for i in range(30)])
    df = _stream(spark, bootstrap, topic, maxOffsetsPerTrigger="8")
    first = _run_available_now(df, tmp_path / "ckpt")
    assert [len(b) for b in first if b] == [8, 8, 8, 6]
    assert all(len(b) <= 8 for b in first)

    produce(bootstrap, topic, [(i % 2, None, b"b%d" % i, None) for i in range(11)])
    second = _run_available_now(df, tmp_path / "ckpt")
    assert all(len(b) <= 8 for b in second)
    rows = [row for batch in first + second for row in batch]
    assert len(rows) == 41
    assert len({(p, o) for p, o, _ in rows}) == 41
    values = {v for _, _, v in rows}
    assert values == {b"a%d" % i for i in range(30)} | {b"b%d" % i for i in range(11)}

    offsets = json.loads((tmp_path / "ckpt" / "offsets" / "0").read_text().splitlines()[-1])
    assert offsets == {topic: {"0": 4, "1": 4}}  # the built-in connector's checkpoint form


def test_stream_to_kafka_copies_records_with_headers(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    source, sink = topic_factory(partitions=2), topic_factory(partitions=1)
    headers = [("h", b"1"), ("h", None)]
    produce(bootstrap, source, [(i % 2, b"k%d" % i, b"v%d" % i, headers) for i in range(10)])
    query = (
        _stream(spark, bootstrap, source)
        .select("key", "value", "headers")
        .writeStream.format("kheaders")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    copied = consume_all(bootstrap, sink, 1, expected=10)
    assert sorted((m.key(), m.value()) for m in copied) == sorted(
        (b"k%d" % i, b"v%d" % i) for i in range(10)
    )
    assert all(m.headers() == headers for m in copied)


def test_stream_reader_replays_a_batch_identically_and_stops_at_the_available_now_target(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory(partitions=2)
    produce(bootstrap, topic, [(i % 2, None, b"%d" % i, [("n", b"%d" % i)]) for i in range(20)])
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "startingOffsets": "earliest",
        "includeHeaders": "true",
        "maxOffsetsPerTrigger": "7",
    }
    reader = KafkaDataSource(options).streamReader(kafka_schema(True))
    try:
        start = reader.initialOffset()
        assert start == {topic: {"0": 0, "1": 0}}
        assert reader.getDefaultReadLimit() == ReadMaxRows(7)
        end = reader.latestOffset(start, reader.getDefaultReadLimit())
        assert sum(end[topic].values()) == 7

        def rows(s: dict[str, dict[str, int]], e: dict[str, dict[str, int]]) -> list[dict]:
            # A fresh, unpickled reader: what an executor gets after a restart.
            worker = pickle.loads(pickle.dumps(reader))
            return [
                row
                for part in worker.partitions(s, e)
                for batch in worker.read(part)
                for row in batch.to_pylist()
            ]

        first = rows(start, end)
        assert len(first) == 7
        assert rows(start, end) == first  # same offsets, same rows
        reader.prepareForTriggerAvailableNow()
        produce(bootstrap, topic, [(0, None, b"late", None)])
        target = reader.latestOffset(end, ReadAllAvailable())
        assert target == {topic: {"0": 10, "1": 10}}  # the record produced later waits
    finally:
        reader.stop()


def test_topics_matching_the_pattern_later_are_read_from_their_earliest_offset(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    first = topic_factory()
    produce(bootstrap, first, [(0, None, b"first", None)])
    register(spark)
    df = (
        spark.readStream.format("kheaders")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribePattern", first[:-8].replace(".", r"\.") + ".*")
        .option("startingOffsets", "earliest")
        .load()
    )
    before = _run_available_now(df, tmp_path / "ckpt")
    second = topic_factory()  # same test-name prefix, so it matches the pattern
    produce(bootstrap, second, [(0, None, b"second-%d" % i, None) for i in range(3)])
    after = _run_available_now(df, tmp_path / "ckpt")
    assert sorted(v for b in before for _, _, v in b) == [b"first"]
    assert sorted(v for b in after for _, _, v in b) == [b"second-0", b"second-1", b"second-2"]
