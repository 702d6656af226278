"""Delivery reports: what librdkafka holds for each record until it reports it, and what then runs.

librdkafka keeps one Python callable per record until its delivery report, and confluent-kafka
gives that report no headers (``msg.headers()`` is ``None`` there, its issue 574). So that
callable is one small object carrying the record's headers as sent (:data:`Kept`): a
:class:`Report` for ``Producer.produce``'s callback, a :class:`JavaReport` for ``send``'s,
kheaders.aio's future (``kheaders.aio._delivery``) for an async record. The sender fills its
``sent`` before librdkafka takes it (:class:`Carrier` is that contract).

What every report of a producer does first is chosen once, when the producer is built: its
:class:`Reporter` gives the message the record's read-only headers and, when interceptors
implement ``on_acknowledgement``, runs them (Java's order: before the caller's callback). Sync
and async records share it; only where the outcome goes then differs (a callback, a future).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeAlias

from kheaders._client.records import RecordMetadata
from kheaders._model.headers import Headers, received

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message

DeliveryCallback = Callable[["KafkaError | None", "Message"], object]
"""confluent-kafka's callback: ``(err, msg)``; kheaders makes ``msg.headers()`` the Headers."""
SendCallback = Callable[[RecordMetadata, "KafkaError | None"], object]
"""Java's callback for ``Producer.send``: ``(metadata, error)``."""
AckHook = Callable[[RecordMetadata, "KafkaError | Exception | None", Headers], None]
"""The interceptor chain's ``acknowledge``: ``(metadata, error, headers)``."""

Kept: TypeAlias = "Headers | tuple[tuple[str, bytes | None], ...]"
"""A record's headers as its report keeps them until librdkafka reports the record: closed
:class:`Headers` as they are (interceptors may recognise them by identity; the shared
:data:`EMPTY` for none), or the pairs of a plain list as a tuple (a snapshot the caller's later
changes do not reach)."""

EMPTY = received([])
"""The headers of a record that has none (read-only, shared)."""


def read_only(kept: Kept) -> Headers:
    """The read-only Headers a report shows for what it kept."""
    if type(kept) is tuple:
        return received(kept)
    return kept  # type: ignore[return-value]  # closed Headers


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
        msg.latency(),
    )


class Carrier(Protocol):
    """A record's delivery report as the sender hands it to librdkafka: ``sent`` is filled
    with the record's :data:`Kept` headers first; called ``(err, msg)`` by librdkafka."""

    sent: Kept

    def __call__(self, err: KafkaError | None, msg: Message, /) -> object: ...


class Reporter:
    """What every delivery report of one producer does before the outcome goes on: the
    message shows the record's read-only headers, then interceptors' ``on_acknowledgement``
    (``ack``, when any implement it) runs, exactly once per record.

    ``share``: records produced without headers that nothing else sees (no ``on_send``, no
    serializer) share one report per callback, so they keep no object alive in flight.

    Raises what ``ack`` raises (only a strict chain raises).
    """

    __slots__ = ("_shared", "ack", "share")

    def __init__(self, ack: AckHook | None, *, share: bool) -> None:
        self.ack = ack
        self.share = share
        self._shared: dict[object, weakref.ref[Report]] = {}

    def reported(self, kept: Kept, err: KafkaError | None, msg: Message) -> RecordMetadata | None:
        """Show ``kept`` on ``msg`` and acknowledge; the metadata built for that (``None``
        when no interceptor acknowledges)."""
        shown = read_only(kept)
        msg.set_headers(shown)
        ack = self.ack
        if ack is None:
            return None
        md = metadata_of(msg)
        ack(md, err, shown)
        return md

    def report(self, cb: DeliveryCallback | None, headers: object) -> Report | None:
        """The report of a record produced with ``cb`` (or none) and ``headers`` (as given):
        ``None`` when nothing waits for it (no callback, no interceptor acknowledging)."""
        if cb is None and self.ack is None:
            return None
        if headers is not None or not self.share:
            return Report(self, cb)
        try:
            ref = self._shared.get(cb)
        except TypeError:  # an unhashable callable: a report of its own
            return Report(self, cb)
        report = None if ref is None else ref()
        if report is None:
            report = Report(self, cb)
            shared = self._shared

            def forget(dead: weakref.ref[Report], cb: object = cb) -> None:
                if shared.get(cb) is dead:  # not one built for cb since
                    shared.pop(cb, None)

            # held weakly: librdkafka's references (its records in flight) keep it alive,
            # so ``cb`` and what it holds are released once its last record is reported
            shared[cb] = weakref.ref(report, forget)
        return report


class Report:
    """One record's report for ``Producer.produce``: the :class:`Reporter`'s part, then the
    caller's ``cb(err, msg)`` (if any) with ``msg.headers()`` the record's Headers."""

    __slots__ = ("__weakref__", "cb", "reporter", "sent")

    def __init__(self, reporter: Reporter, cb: DeliveryCallback | None) -> None:
        self.reporter = reporter
        self.cb = cb
        self.sent: Kept = EMPTY

    def __call__(self, err: KafkaError | None, msg: Message, /) -> None:
        self.reporter.reported(self.sent, err, msg)
        cb = self.cb
        if cb is not None:
            cb(err, msg)


class JavaReport(Report):
    """One record's report for ``Producer.send``: the :class:`Reporter`'s part, then Java's
    ``cb(metadata, err)``."""

    __slots__ = ()
    cb: SendCallback  # type: ignore[assignment]

    def __call__(self, err: KafkaError | None, msg: Message, /) -> None:
        md = self.reporter.reported(self.sent, err, msg)
        self.cb(metadata_of(msg) if md is None else md, err)
