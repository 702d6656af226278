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
from kheaders.spark._cluster import check_workers, use_this_interpreter_locally
from kheaders.spark._errors import DataLossError
from kheaders.spark._offsets import (
    TP,
    OffsetRange,
    OffsetReader,
    Offsets,
    check_batch_range,
    check_start,
    from_json,
    rate_limit,
    resolve,
    split,
    to_json,
)
from kheaders.spark._options import (
    READ_OPTIONS,
    SourceOptions,
    check_option_names,
    sink_options,
    source_options,
)
from kheaders.spark._reader import read_range
from kheaders.spark._writer import KafkaBatchWriter, KafkaStreamWriter

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameReader, DataFrameWriter, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

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
    return list(split(ranges, options.min_partitions, options.max_records_per_partition))


def _read(options: SourceOptions, partition: InputPartition) -> Iterator[pa.RecordBatch]:
    if isinstance(partition, OffsetRange):
        return read_range(options, partition)
    return iter(())  # Spark's stand-in partition when there is nothing to read


class KafkaBatchReader(DataSourceReader):
    """Batch read: offset ranges resolved once on the driver, one task per (split) range."""

    def __init__(self, options: SourceOptions) -> None:
        self._options = options

    def partitions(self) -> Sequence[InputPartition]:
        """One OffsetRange per partition (split by minPartitions and maxRecordsPerPartition);
        empty ranges dropped.

        Raises TopicNotFoundError for a subscribed topic or assigned partition that does not
        exist, DataLossError when a starting offset is past the end of the log or (with
        failOnDataLoss) below its start, BrokerUnavailableError when no broker answers.
        """
        opts = self._options
        reader = OffsetReader(opts)
        try:
            marks = reader.watermarks(reader.topic_partitions(strict=True))
        finally:
            reader.close()
        start = resolve(opts.starting, marks, "startingOffsets")
        end = resolve(opts.ending, marks, "endingOffsets")
        check_batch_range(start, end, marks)
        start = check_start(start, marks, opts.fail_on_data_loss)
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


def register(spark: SparkSession, *, check: bool = True) -> None:
    """Register the ``kheaders`` data source with ``spark`` (idempotent).

    With a ``local`` master, Spark's Python workers run on this interpreter unless
    ``PYSPARK_PYTHON`` or ``spark.pyspark.python`` names another one.

    With ``check`` (once per application) a tiny task first makes sure Spark's Python
    workers can import kheaders, confluent-kafka and pyarrow. Raises WorkerSetupError,
    saying how to ship them (docs/spark-cluster.md), when they cannot.
    """
    use_this_interpreter_locally(spark)
    if check:
        check_workers(spark)
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

    Unknown option names are warned about here, in the caller's process (the source's own
    warning is issued in Spark's planning worker, whose output the caller may not see).

    Example (``bs`` a bootstrap servers string)::

        df = read_kafka(spark, **{"kafka.bootstrap.servers": bs, "subscribe": "t"}).load()
    """
    check_option_names(options, READ_OPTIONS)
    if streaming:
        return kafka_reader(spark, streaming=True).options(**options)
    return kafka_reader(spark).options(**options)


@overload
def kafka_writer(df: DataFrame, *, streaming: Literal[False] = False) -> DataFrameWriter: ...
@overload
def kafka_writer(df: DataFrame, *, streaming: Literal[True]) -> DataStreamWriter: ...
def kafka_writer(df: DataFrame, *, streaming: bool = False) -> DataFrameWriter | DataStreamWriter:
    """``df.write`` (or ``writeStream``) to Kafka: format ``kafka`` when Spark's connector is
    installed, else ``kheaders``; a batch writer has save mode ``append`` set.

    Spark refuses every Python data source the default save mode ``ErrorIfExists``
    (``UNSUPPORTED_DATA_SOURCE_SAVE_MODE``) before the source is asked, so
    ``df.write.format("kheaders").save()`` needs ``.mode("append")``; this does it for you.
    Spark's own Kafka sink treats ``append`` like its default.
    """
    spark = df.sparkSession
    name = "kafka" if kafka_connector_available(spark) else SOURCE_NAME
    if name == SOURCE_NAME:
        register(spark)
    if streaming:
        return df.writeStream.format(name)
    return df.write.format(name).mode("append")
