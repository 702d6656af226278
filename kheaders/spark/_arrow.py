"""The Kafka row schema (Spark and Arrow forms) and a columnar builder of record batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kheaders._model.received import message_headers

if TYPE_CHECKING:
    from confluent_kafka import Message

# confluent-kafka's timestamp types (TIMESTAMP_NOT_AVAILABLE, CREATE_TIME, LOG_APPEND_TIME)
# in Java numbering (NO_TIMESTAMP_TYPE -1, CREATE_TIME 0, LOG_APPEND_TIME 1).
_TIMESTAMP_TYPE_TO_JAVA = (-1, 0, 1)

HEADER_STRUCT = StructType(
    [StructField("key", StringType(), True), StructField("value", BinaryType(), True)]
)
HEADERS_TYPE = ArrayType(HEADER_STRUCT, containsNull=True)

_BASE_FIELDS = [
    StructField("key", BinaryType(), True),
    StructField("value", BinaryType(), True),
    StructField("topic", StringType(), True),
    StructField("partition", IntegerType(), True),
    StructField("offset", LongType(), True),
    StructField("timestamp", TimestampType(), True),
    StructField("timestampType", IntegerType(), True),
]

_ARROW_HEADER = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
ARROW_HEADERS_TYPE = pa.list_(pa.field("element", _ARROW_HEADER))
_ARROW_TIMESTAMP = pa.timestamp("us", tz="UTC")
_ARROW_BASE = [
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", _ARROW_TIMESTAMP),
    pa.field("timestampType", pa.int32()),
]


def kafka_schema(include_headers: bool) -> StructType:
    """The Spark schema of rows read from Kafka (all fields nullable), as Spark's connector."""
    fields = list(_BASE_FIELDS)
    if include_headers:
        fields.append(StructField("headers", HEADERS_TYPE, True))
    return StructType(fields)


def arrow_schema(include_headers: bool) -> pa.Schema:
    """The Arrow schema Spark expects for :func:`kafka_schema` batches (equal, nullability too)."""
    fields = list(_ARROW_BASE)
    if include_headers:
        fields.append(pa.field("headers", ARROW_HEADERS_TYPE))
    return pa.schema(fields)


class BatchBuilder:
    """Collects consumed messages of one topic-partition column by column into RecordBatches."""

    __slots__ = (
        "_h_null",
        "_h_offsets",
        "_h_pairs",
        "_include_headers",
        "_keys",
        "_offsets",
        "_partition",
        "_schema",
        "_topic",
        "_ts",
        "_ts_types",
        "_values",
    )

    def __init__(self, topic: str, partition: int, include_headers: bool) -> None:
        self._topic = topic
        self._partition = partition
        self._include_headers = include_headers
        self._schema = arrow_schema(include_headers)
        self._reset()

    def _reset(self) -> None:
        self._keys: list[bytes | None] = []
        self._values: list[bytes | None] = []
        self._offsets: list[int] = []
        self._ts: list[int | None] = []
        self._ts_types: list[int] = []
        self._h_offsets: list[int] = [0]
        self._h_null: list[bool] = []
        self._h_pairs: list[tuple[str, bytes | None]] = []

    def __len__(self) -> int:
        return len(self._offsets)

    def add(self, messages: Sequence[Message], end: int) -> int:
        """Append data messages with offset < ``end``; return the last offset seen (-1 if none).

        Messages of one partition come in offset order, so only the last one is checked
        against ``end`` unless the batch runs past it. Works column by column (comprehensions).
        """
        if not messages:
            return -1
        last: int = messages[-1].offset()  # type: ignore[assignment]
        if last >= end:
            cut = next(i for i, m in enumerate(messages) if m.offset() >= end)  # type: ignore[operator]
            messages = messages[:cut]
        self._keys += [m.key() for m in messages]
        self._values += [m.value() for m in messages]
        self._offsets += [m.offset() for m in messages]  # type: ignore[misc]
        stamps = [m.timestamp() for m in messages]
        self._ts += [ms * 1000 if kind else None for kind, ms in stamps]
        self._ts_types += [_TIMESTAMP_TYPE_TO_JAVA[kind] for kind, _ in stamps]
        if self._include_headers:
            headers = [message_headers(m) for m in messages]
            self._h_null += [h is None for h in headers]
            pairs, ends = self._h_pairs, self._h_offsets.append
            for h in headers:
                if h:
                    pairs.extend(h)
                ends(len(pairs))
        return last

    def build(self) -> pa.RecordBatch:
        """Return the collected rows as one RecordBatch and start a new one."""
        n = len(self._offsets)
        columns: list[pa.Array] = [
            pa.array(self._keys, pa.binary()),
            pa.array(self._values, pa.binary()),
            pa.repeat(pa.scalar(self._topic, pa.string()), n),
            pa.repeat(pa.scalar(self._partition, pa.int32()), n),
            pa.array(self._offsets, pa.int64()),
            pa.array(self._ts, _ARROW_TIMESTAMP),
            pa.array(self._ts_types, pa.int32()),
        ]
        if self._include_headers:
            columns.append(self._headers_array())
        batch = pa.RecordBatch.from_arrays(columns, schema=self._schema)
        self._reset()
        return batch

    def _headers_array(self) -> pa.Array:
        entries = pa.array(self._h_pairs, _ARROW_HEADER)
        mask = pa.array(self._h_null, pa.bool_())
        return pa.ListArray.from_arrays(
            pa.array(self._h_offsets, pa.int32()), entries, type=ARROW_HEADERS_TYPE, mask=mask
        )
