"""Replaying dead letters: each goes back to its original topic (and partition), with its key,
value and original timestamp, and its headers without the retry and failure headers, so it
starts over at attempt 1. Offsets are committed for a group once every replayed record was
acknowledged, so a second run replays only what came since. ``kheaders dlt replay`` is the
command over :func:`replay`."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from confluent_kafka import OFFSET_BEGINNING, KafkaError, Message, TopicPartition

from kheaders._errors import DeserializationError, InvalidNameError
from kheaders._model.keys import check_name
from kheaders._model.redact import DEFAULT_REDACTOR, printable, render_value
from kheaders.deadletter import _own
from kheaders.deadletter import spring as sh
from kheaders.deadletter._describe import summary
from kheaders.deadletter._write import without_retry_state

ORIGINAL_TOPICS = (sh.ORIGINAL_TOPIC, _own.ORIGINAL_TOPIC)
ORIGINAL_PARTITIONS = (sh.ORIGINAL_PARTITION, _own.ORIGINAL_PARTITION)


def _last(headers: list[tuple[str, bytes | None]], names: tuple[str, ...]) -> bytes | None:
    """The last value of the first of ``names`` present."""
    last = dict(headers)
    return next((last[name] for name in names if name in last), None)


def _bad_name(topic: str) -> str | None:
    """Why ``topic`` (read from a header) cannot be produced to, or None."""
    try:
        check_name(topic)
    except InvalidNameError as exc:
        return printable(str(exc))
    return None


def _partition(headers: list[tuple[str, bytes | None]]) -> int:
    value = _last(headers, ORIGINAL_PARTITIONS)
    if value is None:
        return -1
    if len(value) == 4:  # Spring: a 4-byte int
        return int.from_bytes(value, "big", signed=True)
    try:
        return int(value.decode("ascii"))  # kheaders.dlt.*: decimal text
    except ValueError:
        return -1


def assign_from_committed(consumer: Any, topic: str) -> bool:
    """Assign every partition of ``topic`` at the group's committed offsets (the beginning
    where none); False when the topic does not exist."""
    meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
    if meta is None or meta.error is not None or not meta.partitions:
        return False
    tps = [TopicPartition(topic, p) for p in sorted(meta.partitions)]
    consumer.assign(
        [
            TopicPartition(topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING)
            # the broker answered metadata: a slow answer here is a coordinator still loading
            # its offsets (a new group on a busy broker), worth a longer wait
            for tp in consumer.committed(tps, timeout=30)
        ]
    )
    return True


def replay(
    consumer: Any,
    producer: Any,
    topic: str,
    out: TextIO,
    *,
    to: str | None,
    where: list[tuple[str, bytes]],
    limit: int | None,
    timeout: float,
    err: TextIO = sys.stderr,
) -> int:
    """Replay the records ``consumer`` (assigned to ``topic``, see
    :func:`assign_from_committed`) reads until ``timeout`` seconds pass without one:
    republished through ``producer`` (None: a dry run, only printed on ``out``) to ``to`` or
    their original topic, those whose last values match every ``where`` pair; at most
    ``limit``. Offsets are committed only once every replayed record was acknowledged.

    Returns the exit code: 0 done, 1 when a record names no original topic or a record was
    not delivered (nothing committed then). Problems are told on ``err``; raises
    KafkaException from the clients.
    """
    run = _Run(topic, to, where, producer, out, err)
    last = time.monotonic()
    while (limit is None or run.replayed < limit) and time.monotonic() - last < timeout:
        try:
            msg = consumer.poll(0.2)
        except DeserializationError as exc:  # unreadable headers: say so, pass it over
            print(f"kheaders dlt replay: {printable(str(exc))}", file=err)
            continue
        if msg is None or msg.error() is not None:
            continue
        last = time.monotonic()
        if not run.one(msg):
            break
    if producer is not None:
        producer.flush(30)
        if run.failed or len(producer):
            print(f"kheaders dlt replay: not delivered: {run.failed[:1]}", file=err)
            return 1  # nothing committed: a second run replays them again
        if run.done:
            offsets = [TopicPartition(topic, p, o) for p, o in run.done.items()]
            consumer.commit(offsets=offsets, asynchronous=False)
    verb = "would replay" if producer is None else "replayed"
    print(f"{verb} {run.replayed} of {run.seen} records read from {printable(topic)}", file=out)
    return run.code


class _Run:
    """One replay's progress: what was seen, sent and may be committed."""

    def __init__(  # noqa: PLR0917 - one replay's parts
        self,
        topic: str,
        to: str | None,
        where: list[tuple[str, bytes]],
        producer: Any,
        out: TextIO,
        err: TextIO,
    ) -> None:
        self.topic, self.to, self.where, self.producer = topic, to, where, producer
        self.out, self.err = out, err
        self.failed: list[KafkaError] = []
        self.done: dict[int, int] = {}
        self.replayed = self.seen = self.code = 0

    def one(self, msg: Message) -> bool:
        """Replay ``msg`` when it matches; False (stop) when it names no original topic."""
        self.seen += 1
        raw: Any = msg.headers()
        headers: list[tuple[str, bytes | None]] = [(k, v) for k, v in raw]
        where = f"{printable(self.topic)}[{msg.partition()}]@{msg.offset()}"
        if all(_last(headers, (k,)) == v for k, v in self.where):
            target = self.to or (_last(headers, ORIGINAL_TOPICS) or b"").decode("utf-8", "replace")
            problem = "names no original topic" if not target else _bad_name(target)
            if problem:
                print(
                    f"kheaders dlt replay: {where} {problem}: replay it with --to",
                    file=self.err,
                )
                self.code = 1
                return False
            _send(self.producer, msg, target, headers, self.to is None, self.failed)
            about = summary(headers, DEFAULT_REDACTOR)  # where it was first read, and why it failed
            line = f"{where} -> {printable(target)}  key={render_value(msg.key())}"
            print(f"{line}  {about}" if about else line, file=self.out)
            self.replayed += 1
        self.done[msg.partition() or 0] = (msg.offset() or 0) + 1
        return True


def original_timestamp(msg: Message, headers: list[tuple[str, bytes | None]]) -> int:
    """The timestamp a replayed record goes back with: the original record's, from Spring's
    ``kafka_original-timestamp`` (8-byte long) or kheaders' ``kheaders.dlt.original.timestamp``
    (decimal text), the last one that decodes; else the dead letter's own (0: the producer
    stamps it). A dead letter's own timestamp is when it was dead-lettered (Spring, and
    kheaders' processor, stamp them at send time), not when the record was made."""
    for key, value in reversed(headers):
        if value is None:
            continue
        if key == sh.ORIGINAL_TIMESTAMP:
            spring = sh.decode_fixed(value, 8)
            if spring is not None and spring > 0:
                return spring
        elif key == _own.ORIGINAL_TIMESTAMP and value.isdigit() and len(value) <= 19:
            return int(value)
    ts_type, ts = msg.timestamp()
    return ts if ts_type else 0


def _send(  # noqa: PLR0917 - one record's parts
    producer: Any,
    msg: Message,
    target: str,
    headers: list[tuple[str, bytes | None]],
    to_original: bool,
    failed: list[KafkaError],
) -> None:
    if producer is None:
        return
    partition = _partition(headers) if to_original else -1

    def report(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            failed.append(err)

    producer.produce(
        target,
        value=msg.value(),
        key=msg.key(),
        partition=partition,
        timestamp=original_timestamp(msg, headers),
        headers=without_retry_state(headers),
        on_delivery=report,
    )
    producer.poll(0)
