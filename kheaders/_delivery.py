"""Delivery reports: the callback shapes and the per-record report the producer installs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kheaders._headers import Headers
from kheaders._records import RecordMetadata

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message

DeliveryCallback = Callable[["KafkaError | None", "Message"], object]
"""confluent-kafka's callback: ``(err, msg)``; kheaders makes ``msg.headers()`` the Headers."""
SendCallback = Callable[[RecordMetadata, "KafkaError | None"], object]
"""Java's callback for ``Producer.send``: ``(metadata, error)``."""
AckHook = Callable[[RecordMetadata, "KafkaError | Exception | None", Headers], None]


def metadata_of(msg: Message) -> RecordMetadata:
    """Where a delivered (or failed) record landed, from librdkafka's delivery report."""
    ts_type, ts = msg.timestamp()
    offset = msg.offset()
    partition = msg.partition()
    key = msg.key()
    value = msg.value()
    return RecordMetadata(
        msg.topic() or "",
        -1 if partition is None else partition,
        offset if offset is not None and offset >= 0 else -1,
        ts if ts_type else None,
        -1 if key is None else len(key),
        -1 if value is None else len(value),
    )


class _Report:
    """One record's delivery report: interceptors' acknowledgement, then the caller's callback.

    A slotted object rather than a closure: a closure costs the garbage collector five
    tracked objects per record in flight (function and cells), this costs one.
    """

    __slots__ = ("_ack", "_cb", "_headers", "_java_cb")

    def __init__(
        self,
        headers: Headers,
        ack: AckHook | None,
        cb: DeliveryCallback | None,
        java_cb: SendCallback | None,
    ) -> None:
        self._headers = headers
        self._ack = ack
        self._cb = cb
        self._java_cb = java_cb

    def __call__(self, err: KafkaError | None, msg: Message) -> None:
        ack = self._ack
        java_cb = self._java_cb
        md = metadata_of(msg) if ack is not None or java_cb is not None else None
        if ack is not None:
            ack(md, err, self._headers)  # type: ignore[arg-type]
        if java_cb is not None:
            java_cb(md, err)  # type: ignore[arg-type]
        elif self._cb is not None:
            msg.set_headers(self._headers)  # type: ignore[arg-type]
            self._cb(err, msg)


def delivery_report(
    headers: Headers,
    ack: AckHook | None,
    cb: DeliveryCallback | None,
    java_cb: SendCallback | None,
) -> Callable[[KafkaError | None, Message], None]:
    """The record's report: interceptors' acknowledgement first, then the caller's callback.

    ``cb`` gets ``(err, msg)`` with ``msg.headers()`` set to the record's ``headers``;
    ``java_cb`` gets ``(metadata, err)``.
    """
    return _Report(headers, ack, cb, java_cb)
