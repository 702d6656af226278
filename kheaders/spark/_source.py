"""The ``kheaders`` Python data source: Spark's Kafka connector options and schema, librdkafka."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Literal, overload

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from kheaders._settings import config_bool
from kheaders.spark._arrow import kafka_schema
from kheaders.spark._errors import DataLossError
from kheaders.spark._offsets import (
    TP,
    OffsetRange,
    OffsetReader,
    Offsets,
    check_start,
    from_json,
    rate_limit,
    resolve,
    split,
    to_json,
)
from kheaders.spark._options import SourceOptions, source_options
from kheaders.spark._reader import read_range
from kheaders.spark._writer import KafkaBatchWriter, KafkaStreamWriter, sink_options

if TYPE_CHECKING:
    from pyspark.sql import DataFrameReader, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamReader

SOURCE_NAME = "kheaders"
_OffsetJson = dict[str, dict[str, int]]


class KafkaDataSource(DataSource):
    """Reads and writes Kafka like Spark's ``kafka`` format, through confluent-kafka."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        include = config_bool(self.options.get("includeHeaders", False), "option 'includeHeaders'")
        return kafka_schema(include)

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaBatchReader(source_options(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802
        return KafkaStreamReader(source_options(self.options, streaming=True))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return KafkaBatchWriter(sink_options(self.options, schema))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802
        return KafkaStreamWriter(sink_options(self.options, schema))


def _ranges(start: Offsets, end: Offsets, options: SourceOptions) -> list[InputPartition]:
    ranges = [OffsetRange(t, p, s, end[(t, p)]) for (t, p), s in sorted(start.items())]
    return list(split(ranges, options.min_partitions))


def _read(options: SourceOptions, partition: InputPartition) -> Iterator[pa.RecordBatch]:
    if isinstance(partition, OffsetRange):
        return read_range(options, partition)
    return iter(())  # Spark's stand-in partition when there is nothing to read


class KafkaBatchReader(DataSourceReader):
    """Batch read: offset ranges resolved once on the driver, one task per (split) range."""

    def __init__(self, options: SourceOptions) -> None:
        self._options = options

    def partitions(self) -> Sequence[InputPartition]:
        """One OffsetRange per partition (split by minPartitions); empty ranges dropped.

        Raises DataLossError (failOnDataLoss) when a starting offset is below the log start.
        """
        opts = self._options
        reader = OffsetReader(opts)
        try:
            marks = reader.watermarks(reader.topic_partitions())
        finally:
            reader.close()
        start = check_start(
            resolve(opts.starting, marks, "startingOffsets"), marks, opts.fail_on_data_loss
        )
        end = resolve(opts.ending, marks, "endingOffsets")
        end = {tp: min(e, marks[tp][1]) for tp, e in end.items()}
        return _ranges(start, end, opts)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Records of one range as Arrow batches (see read_range)."""
        return _read(self._options, partition)


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batch read with offsets ``{"topic": {"0": next_offset}}`` in the checkpoint."""

    def __init__(self, options: SourceOptions) -> None:
        self._options = options
        self._reader: OffsetReader | None = None
        self._target: dict[TP, tuple[int, int]] | None = None
        self._last: _OffsetJson | None = None

    def __getstate__(self) -> dict[str, object]:
        return {"_options": self._options, "_reader": None, "_target": None, "_last": None}

    def _offsets(self) -> OffsetReader:
        if self._reader is None:
            self._reader = OffsetReader(self._options)
        return self._reader

    def _marks(self) -> dict[TP, tuple[int, int]]:
        if self._target is not None:
            return self._target
        reader = self._offsets()
        return reader.watermarks(reader.topic_partitions())

    def initialOffset(self) -> _OffsetJson:  # noqa: N802
        """Where a new query starts: startingOffsets resolved (default latest).

        Raises DataLossError (failOnDataLoss) when an offset is below its log start.
        """
        reader = self._offsets()
        marks = reader.watermarks(reader.topic_partitions())
        start = resolve(self._options.starting, marks, "startingOffsets")
        return to_json(check_start(start, marks, self._options.fail_on_data_loss))

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802
        """ReadMaxRows(maxOffsetsPerTrigger) when set, else everything available."""
        limit = self._options.max_offsets_per_trigger
        return ReadMaxRows(limit) if limit else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        """Fix the target: the latest offsets now; later records wait for the next run."""
        self._target = None
        self._target = self._marks()

    def latestOffset(  # noqa: N802
        self, start: _OffsetJson | None = None, limit: ReadLimit | None = None
    ) -> _OffsetJson:
        """The end of the next micro-batch: the latest offsets, capped by ``limit``."""
        begin = from_json(start if start is not None else self._last or {})
        marks = self._marks()
        latest = {tp: high for tp, (_, high) in marks.items()}
        for tp, offset in begin.items():
            latest.setdefault(tp, offset)  # a partition that vanished keeps its position
        if limit is None:
            limit = self.getDefaultReadLimit()
        if isinstance(limit, ReadMaxRows):
            base = {tp: marks[tp][0] for tp in latest if tp not in begin} | begin
            latest = rate_limit(base, latest, limit.max_rows)
        result = to_json(latest)
        self._last = result
        return result

    def partitions(self, start: _OffsetJson, end: _OffsetJson) -> Sequence[InputPartition]:
        """The ranges between two checkpointed offsets; new partitions start at their earliest.

        Raises DataLossError (failOnDataLoss) when records in between left the log.
        """
        begin, until = from_json(start), from_json(end)
        marks = self._offsets().watermarks(until)
        begin = {tp: begin.get(tp, marks[tp][0]) for tp in until}
        for tp, offset in begin.items():
            if until[tp] < offset:
                self._lost(f"{tp[0]}-{tp[1]} went back from offset {offset} to {until[tp]}")
                begin[tp] = until[tp]
        begin = check_start(begin, marks, self._options.fail_on_data_loss)
        return _ranges(begin, {tp: max(until[tp], begin[tp]) for tp in until}, self._options)

    def _lost(self, what: str) -> None:
        if self._options.fail_on_data_loss:
            raise DataLossError(f"{what}: records may have been lost; set failOnDataLoss=false")

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """Records of one range as Arrow batches (see read_range)."""
        return _read(self._options, partition)

    def commit(self, end: _OffsetJson) -> None:
        """Nothing to do: progress lives in Spark's checkpoint, never in Kafka group offsets."""

    def stop(self) -> None:
        """Close the driver's consumer."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None


def register(spark: SparkSession) -> None:
    """Register the ``kheaders`` data source with ``spark`` (idempotent)."""
    spark.dataSource.register(KafkaDataSource)


def kafka_connector_available(spark: SparkSession) -> bool:
    """Whether Spark's JVM Kafka connector (format ``kafka``) is on the classpath."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is not None:
        name = "org.apache.spark.sql.kafka010.KafkaSourceProvider"
        return bool(jvm.org.apache.spark.util.Utils.classIsLoadable(name))
    try:  # Spark Connect: ask the server; without options the connector fails on them instead
        spark.read.format("kafka").load()
    except Exception as exc:
        return "KAFKA_DATA_SOURCE_NOT_ENABLED" not in str(exc)
    return True


@overload
def kafka_reader(spark: SparkSession, *, streaming: Literal[False] = False) -> DataFrameReader: ...
@overload
def kafka_reader(spark: SparkSession, *, streaming: Literal[True]) -> DataStreamReader: ...
def kafka_reader(
    spark: SparkSession, *, streaming: bool = False
) -> DataFrameReader | DataStreamReader:
    """A reader of format ``kafka`` when Spark's connector is installed, else ``kheaders``."""
    reader = spark.readStream if streaming else spark.read
    if kafka_connector_available(spark):
        return reader.format("kafka")
    register(spark)
    return reader.format(SOURCE_NAME)


@overload
def read_kafka(
    spark: SparkSession, *, streaming: Literal[False] = False, **options: str
) -> DataFrameReader: ...
@overload
def read_kafka(
    spark: SparkSession, *, streaming: Literal[True], **options: str
) -> DataStreamReader: ...
def read_kafka(
    spark: SparkSession, *, streaming: bool = False, **options: str
) -> DataFrameReader | DataStreamReader:
    """:func:`kafka_reader` with ``options`` set (names as Spark's connector); then ``.load()``.

    Example (``bs`` a bootstrap servers string)::

        df = read_kafka(spark, **{"kafka.bootstrap.servers": bs, "subscribe": "t"}).load()
    """
    if streaming:
        return kafka_reader(spark, streaming=True).options(**options)
    return kafka_reader(spark).options(**options)
