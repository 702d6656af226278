"""Every produce path behind one harness, for tests that must hold on each of them.

A producer's sender fixes what its records go through once, when it is built
(kheaders._client.sending): plain (nothing sees the records), acknowledging (interceptors
only acknowledge), intercepted (``on_send`` sees them), and kheaders.aio's futures on the
first two. :class:`ProducePath` sends
records one way and returns what their delivery reports showed, so one test runs over all
(the ``produce_path`` fixture), as multidict runs its tests over both implementations.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException

import kheaders
from kheaders import Headers, ProducerRecord, RecordMetadata
from kheaders._client.producer import sender_of
from kheaders._client.sending import Sender
from kheaders.aio import AIOProducer

PATHS = ("plain", "acknowledging", "intercepted", "async", "async-acknowledging")


class AckOnly:
    """An interceptor that only acknowledges: what each acknowledgement showed."""

    def __init__(self) -> None:
        self.acks: list[tuple[Any, list[tuple[str, bytes | None]]]] = []

    def on_acknowledgement(self, metadata: RecordMetadata, error: Any, headers: Headers) -> None:
        self.acks.append((error, [(h.key, h.value) for h in headers]))


class SendAndAck(AckOnly):
    """An interceptor that sees each record (and leaves it as it is) and acknowledges."""

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        return record


@dataclass
class Report:
    """What one record's delivery report showed (``headers`` None: the report has no
    message, an async failure)."""

    error: KafkaError | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None


@dataclass
class ProducePath:
    name: str
    interceptor: AckOnly | None = None
    reports: list[Report] = field(default_factory=list)

    @property
    def expected(self) -> tuple[bool, bool]:
        """Whether the sender builds records, and whether its reports acknowledge."""
        return {
            "plain": (False, False),
            "acknowledging": (False, True),
            "intercepted": (True, True),
            "async": (False, False),
            "async-acknowledging": (False, True),
        }[self.name]

    def _interceptors(self) -> list[object]:
        return [] if self.interceptor is None else [self.interceptor]

    def send(
        self,
        config: dict[str, Any],
        records: list[dict[str, Any]],
        between: Callable[[int], None] = lambda i: None,
    ) -> list[Report]:
        """Produce ``records`` (``produce()`` keywords, topic included) in order, calling
        ``between(i)`` after the i-th; wait for every report; return them in order.

        Raises what producing raises (then nothing is awaited).
        """
        if self.name.startswith("async"):
            return asyncio.run(self._send_async(config, records, between))
        producer = kheaders.Producer(config, interceptors=self._interceptors())
        assert chosen(sender_of(producer)) == self.expected
        reports: list[Report | None] = [None] * len(records)

        def report_for(i: int) -> Callable[[KafkaError | None, Any], None]:
            def report(err: KafkaError | None, msg: Any) -> None:
                reports[i] = Report(err, msg.value(), _shown(msg.headers()))

            return report

        try:
            for i, record in enumerate(records):
                producer.produce(**record, on_delivery=report_for(i))
                between(i)
            assert producer.flush(30) == 0
        finally:
            producer.close(timeout=0)
        assert None not in reports
        return reports  # type: ignore[return-value]

    async def _send_async(
        self,
        config: dict[str, Any],
        records: list[dict[str, Any]],
        between: Callable[[int], None],
    ) -> list[Report]:
        producer = AIOProducer(config, interceptors=self._interceptors())
        assert chosen(sender_of(producer.wrapped)) == self.expected
        futures = []
        try:
            for i, record in enumerate(records):
                futures.append(await producer.produce(**record))
                between(i)
            reports = []
            for fut in futures:
                try:
                    msg = await fut
                except KafkaException as exc:
                    reports.append(Report(exc.args[0], None, None))
                else:
                    reports.append(Report(None, msg.value(), _shown(msg.headers())))
            return reports
        finally:
            await producer.close(0)


def chosen(sender: Sender) -> tuple[bool, bool]:
    """What ``sender`` chose when its producer was built (see :attr:`ProducePath.expected`)."""
    return sender.sees_records, sender.reporter.ack is not None


def _shown(headers: Any) -> list[tuple[str, bytes | None]]:
    """A report's headers as pairs, read as a callback reads them (``.key``, ``.value``)."""
    assert type(headers) is Headers
    assert headers.read_only
    return [(h.key, h.value) for h in headers]


def produce_path(name: str) -> ProducePath:
    interceptor = {
        "acknowledging": AckOnly,
        "async-acknowledging": AckOnly,
        "intercepted": SendAndAck,
    }.get(name)
    return ProducePath(name, None if interceptor is None else interceptor())
