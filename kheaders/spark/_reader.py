"""Task side of the source: read one offset range of one partition into Arrow record batches."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from kheaders._log import get_logger
from kheaders.spark._arrow import BatchBuilder
from kheaders.spark._clientlog import client_conf
from kheaders.spark._errors import DataLossError
from kheaders.spark._offsets import OffsetRange
from kheaders.spark._options import SourceOptions

_log = get_logger("kheaders.spark.source")
_POLL_S = 0.5
_CHECK_AFTER_S = 2.0


def _consumer(options: SourceOptions) -> Consumer:
    return Consumer(
        {
            **client_conf(options.conf, "task"),
            "group.id": options.group_id,
            "enable.auto.commit": False,
            "auto.offset.reset": "error",
            "enable.partition.eof": True,
        }
    )


def read_range(options: SourceOptions, r: OffsetRange) -> Iterator[pa.RecordBatch]:
    """Yield the records of ``r`` (offsets [start, end)) as RecordBatches of the Kafka schema.

    Gaps (compaction, transaction markers) end the range once the next record or the end of
    the log is at or past ``r.end``. Raises DataLossError when offsets have left the log and
    failOnDataLoss is set, TimeoutError when no record comes for kafkaConsumer.pollTimeoutMs,
    KafkaException on other client errors.
    """
    if r.end <= r.start:
        return
    consumer = _consumer(options)
    try:
        yield from _read(consumer, options, r)
    finally:
        consumer.close()


def _read(consumer: Consumer, options: SourceOptions, r: OffsetRange) -> Iterator[pa.RecordBatch]:
    tp = TopicPartition(r.topic, r.partition, r.start)
    consumer.assign([tp])
    builder = BatchBuilder(r.topic, r.partition, options.include_headers)
    next_offset, end, batch_size = r.start, r.end, options.batch_size
    idle_limit = options.poll_timeout_ms / 1000
    last_progress, checked = time.monotonic(), 0.0
    while next_offset < end:
        # Ask for no more than the range still needs: consume() waits until it has that many.
        wanted = min(batch_size, end - next_offset)
        messages = consumer.consume(num_messages=wanted, timeout=_POLL_S)
        errors = [m for m in messages if m.error() is not None]
        if errors:
            messages = [m for m in messages if m.error() is None]
        if messages:
            last = builder.add(messages, end)
            if last >= next_offset:
                next_offset = last + 1
                last_progress = time.monotonic()
            if len(builder) >= batch_size:
                yield builder.build()
        for err in errors:
            resumed = _on_error(consumer, options, r, err, next_offset)
            if resumed is not None:
                next_offset = resumed
                last_progress = time.monotonic()
        idle = time.monotonic() - last_progress
        if not messages and not errors and idle > checked + _CHECK_AFTER_S:
            checked = idle  # nothing comes: is the log still holding next_offset at all?
            resumed = _check_log(consumer, options, r, next_offset)
            if resumed is not None:
                next_offset, checked = resumed, 0.0
                last_progress = time.monotonic()
        if next_offset < end and time.monotonic() - last_progress > idle_limit:
            raise TimeoutError(
                f"no record of {r.topic}-{r.partition} at or after offset {next_offset} "
                f"(range end {end}) within kafkaConsumer.pollTimeoutMs={options.poll_timeout_ms}"
            )
    if len(builder):
        yield builder.build()


def _on_error(
    consumer: Consumer, options: SourceOptions, r: OffsetRange, msg: Message, next_offset: int
) -> int | None:
    """Handle one error event; return the offset to continue from, or None to keep going."""
    err: KafkaError = msg.error()  # type: ignore[assignment]
    eof: int = msg.offset()  # type: ignore[assignment]
    code = err.code()
    if code == KafkaError._PARTITION_EOF:
        # Nothing exists at or after msg.offset(): offsets up to it that never came are gaps.
        return r.end if eof >= r.end else None
    if code in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
        return _check_log(consumer, options, r, next_offset, out_of_range=True)
    if err.fatal():
        raise KafkaException(err)
    _log.warning(
        "kheaders source: read error, retrying",
        topic=r.topic,
        partition=r.partition,
        error=str(err),
    )
    return None


def _check_log(
    consumer: Consumer,
    options: SourceOptions,
    r: OffsetRange,
    next_offset: int,
    *,
    out_of_range: bool = False,
) -> int | None:
    """None if the log still holds ``next_offset``; else fail or skip the lost offsets.

    Raises DataLossError when failOnDataLoss is set and offsets of the range have left the log
    (or the log was truncated below them).
    """
    tp = TopicPartition(r.topic, r.partition)
    fetched = consumer.get_watermark_offsets(tp, cached=True)[1]
    if fetched < 0 and not out_of_range:
        return None  # no fetch answer yet: nothing to judge by (pollTimeoutMs bounds the wait)
    low, high = consumer.get_watermark_offsets(
        tp, timeout=options.api_timeout_ms / 1000, cached=False
    )
    high = max(high, fetched)
    if low <= next_offset < high and not out_of_range:
        return None
    lost_to = low if next_offset < low else r.end
    message = (
        f"offsets [{next_offset}, {min(lost_to, r.end)}) of {r.topic}-{r.partition} are no "
        f"longer available (log now [{low}, {high}))"
    )
    if options.fail_on_data_loss:
        raise DataLossError(message + "; set failOnDataLoss=false to skip them")
    _log.warning("kheaders source: skipping lost offsets (failOnDataLoss=false)", detail=message)
    if lost_to >= r.end:
        return r.end
    consumer.assign([TopicPartition(r.topic, r.partition, lost_to)])
    return lost_to
