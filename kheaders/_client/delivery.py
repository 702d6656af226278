"""Delivery reports: the callback shapes and the per-record report the producer installs."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from kheaders._client.records import RecordMetadata
from kheaders._model.headers import Headers

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message

DeliveryCallback = Callable[["KafkaError | None", "Message"], object]
"""confluent-kafka's callback: ``(err, msg)``; kheaders makes ``msg.headers()`` the Headers."""
SendCallback = Callable[[RecordMetadata, "KafkaError | None"], object]
"""Java's callback for ``Producer.send``: ``(metadata, error)``."""
AckHook = Callable[[RecordMetadata, "KafkaError | Exception | None", Headers], None]


# RecordMetadata is a frozen dataclass: its __init__ sets each field with object.__setattr__.
# A delivery report builds one per record, so it sets the slots directly (half the cost).
_new = object.__new__
_set_topic, _set_partition, _set_offset, _set_timestamp, _set_key_size, _set_value_size = (
    RecordMetadata.__dict__[f].__set__
    for f in (
        "topic",
        "partition",
        "offset",
        "timestamp",
        "serialized_key_size",
        "serialized_value_size",
    )
)


def metadata_of(msg: Message) -> RecordMetadata:
    """Where a delivered (or failed) record landed, from librdkafka's delivery report."""
    ts_type, ts = msg.timestamp()
    offset = msg.offset()
    partition = msg.partition()
    key = msg.key()
    value = msg.value()
    md = _new(RecordMetadata)
    _set_topic(md, msg.topic() or "")
    _set_partition(md, -1 if partition is None else partition)
    _set_offset(md, offset if offset is not None and offset >= 0 else -1)
    _set_timestamp(md, ts if ts_type else None)
    _set_key_size(md, -1 if key is None else len(key))
    _set_value_size(md, -1 if value is None else len(value))
    return md


def _report(  # noqa: PLR0917 - bound by functools.partial; librdkafka adds (err, msg)
    headers: Headers,
    ack: AckHook | None,
    cb: DeliveryCallback | None,
    java_cb: SendCallback | None,
    err: KafkaError | None,
    msg: Message,
) -> None:
    md = metadata_of(msg) if ack is not None or java_cb is not None else None
    if ack is not None:
        ack(md, err, headers)  # type: ignore[arg-type]
    if java_cb is not None:
        java_cb(md, err)  # type: ignore[arg-type]
    elif cb is not None:
        msg.set_headers(headers)
        cb(err, msg)


def delivery_report(
    headers: Headers,
    ack: AckHook | None,
    cb: DeliveryCallback | None,
    java_cb: SendCallback | None,
) -> Callable[[KafkaError | None, Message], None]:
    """The record's report: interceptors' acknowledgement first, then the caller's callback.

    ``cb`` gets ``(err, msg)`` with ``msg.headers()`` set to the record's ``headers``;
    ``java_cb`` gets ``(metadata, err)``. A ``partial`` rather than a closure: librdkafka
    holds one per record in flight, and a partial is two small objects, a closure seven.
    """
    return partial(_report, headers, ack, cb, java_cb)
