"""The sink: write DataFrame rows to Kafka with headers, at least once, failing on any loss."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from confluent_kafka import KafkaError, KafkaException, Message, Producer
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)

from kheaders._errors import ConfigurationError
from kheaders._log import get_logger
from kheaders._model.limits import check_sendable
from kheaders.spark._clientlog import client_conf
from kheaders.spark._errors import DeliveryError
from kheaders.spark._options import SinkOptions

_log = get_logger("kheaders.spark.sink")


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    """What one task delivered."""

    records: int


class _Delivery:
    __slots__ = ("delivered", "error")

    def __init__(self) -> None:
        self.delivered = 0
        self.error: str | None = None

    def __call__(self, err: KafkaError | None, msg: Message) -> None:
        if err is None:
            self.delivered += 1
        elif self.error is None:
            self.error = f"{msg.topic()}-{msg.partition()}: {err}"


def _delivered(messages: list[WriterCommitMessage | None]) -> int:
    return sum(m.records for m in messages if isinstance(m, KafkaCommitMessage))


def _column(batch: pa.RecordBatch, name: str, n: int) -> list[Any]:
    index = batch.schema.get_field_index(name)
    if index < 0:
        return [None] * n
    return batch.column(index).to_pylist()  # type: ignore[no-any-return]


def _timestamps_ms(batch: pa.RecordBatch, n: int) -> list[int | None]:
    """The ``timestamp`` column (Spark's microseconds) in epoch ms, or nulls without it."""
    index = batch.schema.get_field_index("timestamp")
    if index < 0:
        return [None] * n
    micros = batch.column(index).cast(pa.int64()).to_pylist()
    return [None if t is None else t // 1000 for t in micros]


def write_batches(options: SinkOptions, batches: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
    """Produce every row and wait for every delivery report.

    Raises DeliveryError when any record was not acknowledged (so Spark retries the task),
    ConfigurationError for a row without a topic; InvalidNameError (TypeError for a null)
    for a header key librdkafka cannot take intact, before any record of the row is sent.
    """
    producer = Producer(client_conf(options.conf, "sink"))
    report = _Delivery()
    sent = 0
    for batch in batches:
        sent += _produce_batch(producer, options, batch, report)
    deadline = time.monotonic() + options.flush_timeout_s
    while producer.flush(1.0) > 0:
        if time.monotonic() > deadline:
            raise DeliveryError(f"{len(producer)} records still undelivered after the timeout")
    if report.error is not None:
        raise DeliveryError(
            f"{sent - report.delivered} of {sent} records failed; first: {report.error}"
        )
    return KafkaCommitMessage(records=report.delivered)


def _produce_batch(
    producer: Producer, options: SinkOptions, batch: pa.RecordBatch, report: _Delivery
) -> int:
    n: int = batch.num_rows
    values, keys = _column(batch, "value", n), _column(batch, "key", n)
    topics = [options.topic] * n if options.topic else _column(batch, "topic", n)
    partitions, headers = _column(batch, "partition", n), _column(batch, "headers", n)
    stamps = _timestamps_ms(batch, n)
    produce = producer.produce
    for i in range(n):
        topic, hs, part = topics[i], headers[i], partitions[i]
        if topic is None:
            raise ConfigurationError(f"row {i} of a write batch has a null 'topic'")
        kwargs: dict[str, Any] = {}
        if hs is not None:
            kwargs["headers"] = [(h["key"], h["value"]) for h in hs]
            check_sendable(kwargs["headers"], None)  # the key rule: a null key, NUL, ...
        if part is not None:
            kwargs["partition"] = part
        if stamps[i] is not None:
            kwargs["timestamp"] = stamps[i]
        while True:
            try:
                produce(topic, values[i], keys[i], on_delivery=report, **kwargs)
                break
            except BufferError:
                producer.poll(0.1)
            except (KafkaException, TypeError, ValueError) as exc:
                raise DeliveryError(f"producing to {topic} (row {i}) failed: {exc}") from exc
        if report.error is not None:
            raise DeliveryError(f"delivery failed: {report.error}")
    producer.poll(0)
    return n


class KafkaBatchWriter(DataSourceArrowWriter):
    """Batch write: every task flushes and fails on any undelivered record (at least once)."""

    def __init__(self, options: SinkOptions) -> None:
        self._options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        """Produce the task's rows; raises DeliveryError if any was not acknowledged."""
        return write_batches(self._options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing to do: Kafka has no transaction to commit here (every task flushed)."""

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Records already delivered by successful tasks stay in Kafka (at-least-once)."""
        done = _delivered(messages)
        _log.warning("kheaders sink: write aborted", delivered_already=done)


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """Streaming write: as the batch writer, per micro-batch; a replayed batch is re-sent."""

    def __init__(self, options: SinkOptions) -> None:
        self._options = options

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        """Produce the task's rows; raises DeliveryError if any was not acknowledged."""
        return write_batches(self._options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        """Nothing to do: every task of micro-batch ``batchId`` flushed its records."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        """Records already delivered stay in Kafka; the batch is replayed (at-least-once)."""
        done = _delivered(messages)
        _log.warning("kheaders sink: batch aborted", batch=batchId, delivered_already=done)
