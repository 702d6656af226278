"""Delivery reports: the callback shapes, and the objects librdkafka holds per record in flight.

librdkafka keeps one Python callable per record until its delivery report, and confluent-kafka
gives that report no headers (``msg.headers()`` is ``None`` there, its issue 574; checked on
2.16.1). So a record whose callback shows ``msg.headers()`` carries its headers in that
callable. Every object a record keeps alive until its report is one more the cyclic garbage
collector scans, again and again, while tens of thousands are in flight; so a record's report
is one object (a ``functools.partial`` is three) carrying an untracked snapshot:

* a caller's ``on_delivery``: a bound method of its :func:`delivering` function (built once
  per callback) over the record's :data:`Kept` headers; for records without headers, one
  object serves every record of the callback;
* a :class:`Carrier` of the caller's making (kheaders.aio's futures): the same contract, the
  future itself the only object in flight;
* interceptors' ``on_acknowledgement`` when no ``on_send`` or serializer saw the record: a
  bound method of its :func:`acknowledging` function over the :data:`Kept` headers, as for a
  callback (the read-only Headers and the RecordMetadata are built when the report comes);
* :class:`Acknowledged`: the rest (records that went through ``on_send`` or serializers, and
  Java's ``send`` callback); carries the record's :class:`Headers` itself (interceptors may
  match them by identity).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from kheaders._client.outgoing import EMPTY, Kept
from kheaders._client.records import RecordMetadata
from kheaders._model.headers import Headers, trusted

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message

DeliveryCallback = Callable[["KafkaError | None", "Message"], object]
"""confluent-kafka's callback: ``(err, msg)``; kheaders makes ``msg.headers()`` the Headers."""
SendCallback = Callable[[RecordMetadata, "KafkaError | None"], object]
"""Java's callback for ``Producer.send``: ``(metadata, error)``."""
AckHook = Callable[[RecordMetadata, "KafkaError | Exception | None", Headers], None]


def read_only(headers: Kept) -> Headers:
    """The read-only Headers a report shows for what it kept."""
    if type(headers) is tuple:
        return trusted(headers, read_only=True)
    return headers  # type: ignore[return-value]  # closed Headers


Report = Callable[..., None]
"""A callback's report function: called ``(err, msg)`` it reports a record without headers;
bound to a record's :data:`Kept` headers (``types.MethodType``, one small object per record)
it is called ``(headers, err, msg)``."""


def delivering(cb: DeliveryCallback) -> Report:
    """``cb`` as a :data:`Report`: it sets ``msg.headers()`` to the read-only Headers of the
    record (the shared empty ones without headers) and calls ``cb(err, msg)``."""

    def deliver(first: Any, second: Any, third: Any = None, /) -> None:
        if third is None:  # (err, msg): a msg is never None
            second.set_headers(EMPTY)
            cb(first, second)
            return
        # read_only(headers), inlined: this runs once per record
        third.set_headers(trusted(first, read_only=True) if isinstance(first, tuple) else first)
        cb(second, third)

    return deliver


class Reports:
    """The :data:`Report` of each callback, built once and kept only while a record of that
    callback is in flight: librdkafka's references (the records' reports) keep it alive, this
    holds it weakly. So a callback, and all it holds (a bound method's object), is released
    once its last record's report ran (or librdkafka dropped it), as confluent-kafka does.
    """

    __slots__ = ("_build", "_known")

    def __init__(self, build: Callable[[Any], Report]) -> None:
        self._build = build
        self._known: dict[object, weakref.ref[Report]] = {}

    def of(self, cb: object) -> Report:
        """``cb``'s report function (``build(cb)`` once while records of ``cb`` are in flight)."""
        try:
            ref = self._known.get(cb)
        except TypeError:  # an unhashable callable: a report of its own
            return self._build(cb)
        report = None if ref is None else ref()
        if report is None:
            report = self._build(cb)
            known = self._known

            def forget(dead: weakref.ref[Report], cb: object = cb) -> None:
                if known.get(cb) is dead:  # not one built for cb since
                    known.pop(cb, None)

            known[cb] = weakref.ref(report, forget)
        return report


class Carrier(Protocol):
    """A delivery report that carries its record's :data:`Kept` headers in ``sent``, which
    the producer fills before librdkafka holds it; called as ``(err, msg)``, it sets
    ``msg.headers()`` to ``read_only(sent)`` first."""

    sent: Kept

    def __call__(self, err: KafkaError | None, msg: Message, /) -> object: ...


# RecordMetadata is a frozen dataclass: its __init__ sets each field with object.__setattr__.
# A delivery report builds one per record, so it sets the slots directly (half the cost).
_new = object.__new__
(
    _set_topic,
    _set_partition,
    _set_offset,
    _set_timestamp,
    _set_key_size,
    _set_value_size,
    _set_latency,
) = (
    RecordMetadata.__dict__[f].__set__
    for f in (
        "topic",
        "partition",
        "offset",
        "timestamp",
        "serialized_key_size",
        "serialized_value_size",
        "latency",
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
    _set_latency(md, msg.latency())
    return md


def acknowledging(ack: AckHook, cb: DeliveryCallback | None) -> Report:
    """The :data:`Report` of a record no ``on_send`` or serializer saw, for interceptors'
    ``on_acknowledgement`` (``ack``) and then ``cb``. The read-only Headers and the
    RecordMetadata are built when the report comes, not kept."""

    def acknowledge(first: Any, second: Any, third: Any = None, /) -> None:
        if third is None:  # (err, msg): a record without headers
            shown: Headers = EMPTY
            err, msg = first, second
        else:
            # read_only(headers), inlined: this runs once per record
            shown = trusted(first, read_only=True) if isinstance(first, tuple) else first
            err, msg = second, third
        ack(metadata_of(msg), err, shown)
        if cb is not None:
            msg.set_headers(shown)
            cb(err, msg)

    return acknowledge


class Acknowledged:
    """A record's report for interceptors' ``on_acknowledgement`` (first) and then the
    caller's callback: ``cb(err, msg)`` with ``msg.headers()`` the record's ``headers``, or
    Java's ``java_cb(metadata, err)``. One object (where a ``partial`` was three)."""

    __slots__ = ("ack", "cb", "headers", "java_cb")

    def __init__(
        self,
        headers: Headers,
        ack: AckHook | None,
        cb: DeliveryCallback | None,
        java_cb: SendCallback | None,
    ) -> None:
        self.headers = headers
        self.ack = ack
        self.cb = cb
        self.java_cb = java_cb

    def __call__(self, err: KafkaError | None, msg: Message, /) -> None:
        ack = self.ack
        java_cb = self.java_cb
        md = metadata_of(msg) if ack is not None or java_cb is not None else None
        if ack is not None:
            ack(md, err, self.headers)  # type: ignore[arg-type]
        if java_cb is not None:
            java_cb(md, err)  # type: ignore[arg-type]
        elif self.cb is not None:
            msg.set_headers(self.headers)
            self.cb(err, msg)
