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
from kheaders.deadletter._read import OWN_ORIGIN, SPRING_ORIGIN, number, origin, summary
from kheaders.deadletter._write import without_retry_state


def _bad_name(topic: str) -> str | None:
    """Why ``topic`` (read from a header) cannot be produced to, or None."""
    try:
        check_name(topic)
    except InvalidNameError as exc:
        return printable(str(exc))
    return None


def _target(values: dict[str, bytes | None], to: str | None) -> tuple[str, int]:
    """Where a dead letter goes back: ``to`` (any partition: -1), else the original topic
    and partition of Spring's or kheaders' headers (-1 when malformed); "" for none."""
    found = None if to else origin(values, (SPRING_ORIGIN, OWN_ORIGIN))
    if found is None:
        return to or "", -1
    topic, partition, _ = found
    return topic.decode("utf-8", "replace"), -1 if partition is None else partition


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
    failed: list[KafkaError] = []
    done: dict[int, int] = {}  # partition: the offset to commit
    replayed = seen = code = 0

    def report(error: KafkaError | None, _msg: Message) -> None:
        if error is not None:
            failed.append(error)

    last = time.monotonic()
    while (limit is None or replayed < limit) and time.monotonic() - last < timeout:
        try:
            msg = consumer.poll(0.2)
        except DeserializationError as exc:  # unreadable headers: say so, pass it over
            print(f"kheaders dlt replay: {printable(str(exc))}", file=err)
            continue
        if msg is None or msg.error() is not None:
            continue
        last = time.monotonic()
        seen += 1
        raw: Any = msg.headers()
        headers: list[tuple[str, bytes | None]] = [(k, v) for k, v in raw]
        values = dict(headers)
        if all(values.get(k) == v for k, v in where):
            target, partition = _target(values, to)
            read_at = f"{printable(topic)}[{msg.partition()}]@{msg.offset()}"
            problem = "names no original topic" if not target else _bad_name(target)
            if problem:
                print(f"kheaders dlt replay: {read_at} {problem}: replay it with --to", file=err)
                code = 1
                break
            if producer is not None:
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
            about = summary(headers, DEFAULT_REDACTOR)  # where it was first read, and why it failed
            line = f"{read_at} -> {printable(target)}  key={render_value(msg.key())}"
            print(f"{line}  {about}" if about else line, file=out)
            replayed += 1
        done[msg.partition() or 0] = (msg.offset() or 0) + 1
    if producer is not None:
        producer.flush(30)
        if failed or len(producer):
            print(f"kheaders dlt replay: not delivered: {failed[:1]}", file=err)
            return 1  # nothing committed: a second run replays them again
        if done:
            offsets = [TopicPartition(topic, p, o) for p, o in done.items()]
            consumer.commit(offsets=offsets, asynchronous=False)
    verb = "would replay" if producer is None else "replayed"
    print(f"{verb} {replayed} of {seen} records read from {printable(topic)}", file=out)
    return code


def original_timestamp(msg: Message, headers: list[tuple[str, bytes | None]]) -> int:
    """The timestamp a replayed record goes back with: the original record's, from Spring's
    ``kafka_original-timestamp`` (8-byte long) or kheaders' ``kheaders.dlt.original.timestamp``
    (decimal text), the last one that decodes; else the dead letter's own (0: the producer
    stamps it). A dead letter's own timestamp is when it was dead-lettered (Spring, and
    kheaders' processor, stamp them at send time), not when the record was made."""
    for key, value in reversed(headers):
        if key in (sh.ORIGINAL_TIMESTAMP, _own.ORIGINAL_TIMESTAMP):
            ts = number(key, value, 8)
            if ts is not None and ts > 0:
                return ts
    ts_type, ts = msg.timestamp()
    return ts if ts_type else 0
