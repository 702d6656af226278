"""Dead letters: a source record the target cannot take goes to a topic on the source cluster.

The dead letter is the record as read (raw key, value and headers, in order) followed by the
``kheaders.dlt.*`` headers of :class:`kheaders.deadletter.DeadLetterPublisher`, the error type
``UnmirrorableRecordError`` and the reason. A record too large for the dead-letter topic too
gets a bare dead letter (the reason and its place, no key, value or headers: it stays on the
source at that offset); a dead-letter topic refusing even that is fatal for the run.
"""

from __future__ import annotations

import functools
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message

from kheaders._errors import DeserializationError, InvalidNameError, UnmirrorableRecordError
from kheaders._log import get_logger
from kheaders.deadletter import DeadLetter, DeadLetterPublisher
from kheaders.mirror import _metrics
from kheaders.mirror._metrics import MirrorStats
from kheaders.mirror._tracker import Pending

_log = get_logger("kheaders.mirror")

TOO_LARGE = {KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE}
REFUSED = TOO_LARGE | {KafkaError.INVALID_RECORD, KafkaError.INVALID_MSG}
"""Delivery errors a broker will answer again for the same record."""

_BARE = (
    "; too large for the dead-letter topic as well: key, value and headers left out (the"
    " record stays on the source at that offset)"
)


class DeadLetters:
    """Publishes dead letters to ``dead_letter``'s topics through the producer given to
    :meth:`open` (on the source cluster) and finishes the record's copy once one landed."""

    __slots__ = (
        "_dead_letter",
        "_group",
        "_producer",
        "_publisher",
        "_stats",
        "fatal",
        "in_flight",
    )

    def __init__(self, dead_letter: DeadLetter, group_id: str, stats: MirrorStats) -> None:
        self._producer: Any = None
        self._publisher: DeadLetterPublisher | None = None
        self._dead_letter = dead_letter
        self._group = group_id
        self._stats = stats
        self.in_flight = 0
        """Dead letters handed to the producer and not yet acknowledged."""
        self.fatal: KafkaError | None = None
        """The error of a dead letter the topic refused outright (the run must stop)."""

    def open(self, producer: Any) -> None:
        """Publish through ``producer`` (a confluent-kafka Producer on the source cluster)."""
        self._producer = producer
        self._publisher = DeadLetterPublisher(producer, self._dead_letter, group_id=self._group)
        self.fatal = None

    def send(self, pending: Pending, reason: str, *, bare: bool = False) -> None:
        """Dead-letter ``pending``'s record with ``reason`` (one of its copies is done once it
        lands). Raises KafkaException when the producer refuses for another reason than size."""
        msg = pending.message
        where = f"topic {msg.topic()!r} partition {msg.partition()} offset {msg.offset()}"
        said = reason + _BARE if bare else reason
        if bare:
            msg = Message(
                topic=msg.topic(),
                partition=msg.partition(),
                offset=msg.offset(),
                timestamp=msg.timestamp(),
            )
        error = UnmirrorableRecordError(f"record at {where}: {said}")
        publisher = self._publisher
        assert publisher is not None, "open() first"
        dlt = publisher.topic_for(msg.topic() or "")
        landed = functools.partial(self._landed, pending, dlt, reason, bare)
        while True:
            try:
                publisher.publish(msg, error, on_delivery=landed)
                break
            except (InvalidNameError, DeserializationError):
                msg.set_headers(None)  # headers the client cannot send: the reason says so
            except BufferError:
                self._producer.poll(0.1)
            except KafkaException as exc:
                if bare or exc.args[0].code() not in TOO_LARGE:
                    raise
                self.send(pending, reason, bare=True)
                return
        self.in_flight += 1
        _log.warning(
            "mirror.dead_lettered",
            topic=msg.topic(),
            partition=msg.partition(),
            offset=msg.offset(),
            reason=said,
            dead_letter_topic=dlt,
        )

    def _landed(
        self, pending: Pending, dlt: str, reason: str, bare: bool, error: Any, _msg: Any
    ) -> None:
        self.in_flight -= 1
        if error is not None:
            _log.warning("mirror.dead_letter_failed", topic=dlt, error=str(error))
            if not bare and error.code() in REFUSED:
                self.send(pending, reason, bare=True)
            else:
                self.fatal = error
            return
        self._stats.add(pending.route, _metrics.DEAD_LETTERED, pending.message.topic() or "", dlt)
        pending.finish_one()

    def poll(self, timeout: float) -> None:
        """Serve the dead-letter producer's delivery reports."""
        if self._producer is not None:
            self._producer.poll(timeout)

    def close(self) -> None:
        """Purge what was not delivered (not committed either: sent again after a restart)
        and let the producer go."""
        if self._producer is not None:
            self._producer.purge()
            self._producer.flush(1.0)
        self._publisher = self._producer = None
