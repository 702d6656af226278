"""``kheaders dlt replay TOPIC``: republish dead letters to their original topic."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, TextIO

from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, Message, TopicPartition

from kheaders._errors import DeserializationError, InvalidNameError
from kheaders._model.keys import check_name
from kheaders._model.redact import DEFAULT_REDACTOR, printable, render_value
from kheaders.cli._letters import summary
from kheaders.cli._reach import cannot, quiet

ORIGINAL_TOPICS = ("kafka_original-topic", "kheaders.dlt.original.topic")
ORIGINAL_PARTITIONS = ("kafka_original-partition", "kheaders.dlt.original.partition")


def register(subparsers: Any) -> None:
    """Add the ``dlt`` subcommand (``dlt replay``)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "dlt", help="dead-letter topics: replay them", description="Dead-letter topic tools."
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    replay = actions.add_parser(
        "replay",
        help="republish dead letters to their original topic, retry state reset",
        description=(
            "Read TOPIC (a dead-letter topic) and republish each record to its original topic"
            " (the kafka_original-topic or kheaders.dlt.original.topic header; --to overrides),"
            " and partition when it goes back there, with its key, value and timestamp, and"
            " its headers without the retry and failure headers (retry_topic-*, kafka_original-*,"
            " kafka_exception-*, kheaders.dlt.*), so it starts over at attempt 1. Progress is"
            " committed for a consumer group (default: kheaders-dlt-replay.TOPIC, plus the"
            " --where filter), so a second run replays only what came since. Records --where"
            " leaves out are passed over (committed for that group)."
        ),
    )
    replay.add_argument("topic", metavar="TOPIC", help="the dead-letter topic to replay")
    replay.add_argument("--to", default=None, metavar="TOPIC", help="republish here instead")
    replay.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="HEADER=VALUE",
        help="only records whose last HEADER value is VALUE (UTF-8; repeatable: all must hold)",
    )
    replay.add_argument("--limit", type=int, default=None, metavar="N", help="at most N records")
    replay.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be replayed (each record's key, original offset and exception);"
        " send nothing",
    )
    replay.add_argument("--bootstrap", default=None, help="default: $KHEADERS_BOOTSTRAP")
    replay.add_argument("--group", default=None, help="the consumer group keeping the progress")
    replay.add_argument(
        "--timeout",
        type=float,
        default=3.0,
        metavar="SECONDS",
        help="stop after this long without a record (default 3)",
    )
    replay.set_defaults(handler=run)


def _where(specs: list[str]) -> list[tuple[str, bytes]]:
    out = []
    for spec in specs:
        header, sep, value = spec.partition("=")
        if not sep or not header:
            raise ValueError(f"--where wants HEADER=VALUE, got {printable(spec)!r}")
        out.append((check_name(header), value.encode("utf-8", "surrogateescape")))
    return out


def run(args: argparse.Namespace) -> int:
    """Replay; 0 when done, 1 when a record had no original topic, 2 on a setup error."""
    bootstrap = args.bootstrap or os.environ.get("KHEADERS_BOOTSTRAP", "").strip()
    if not bootstrap:
        print("kheaders dlt replay: pass --bootstrap or set KHEADERS_BOOTSTRAP", file=sys.stderr)
        return 2
    try:
        check_name(args.topic)
        if args.to is not None:
            check_name(args.to)
        where = _where(args.where)
    except (InvalidNameError, ValueError) as exc:
        print(f"kheaders dlt replay: {printable(str(exc))}", file=sys.stderr)
        return 2
    group = args.group or "kheaders-dlt-replay." + args.topic + "".join(
        f".{k}={v.decode('utf-8', 'replace')}" for k, v in where
    )
    return replay(
        bootstrap,
        args.topic,
        sys.stdout,
        to=args.to,
        where=where,
        limit=args.limit,
        dry_run=args.dry_run,
        group=group,
        timeout=args.timeout,
    )


def _last(headers: list[tuple[str, bytes | None]], names: tuple[str, ...]) -> bytes | None:
    for name in names:
        for key, value in reversed(headers):
            if key == name:
                return value
    return None


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


def _assign_from_committed(consumer: Any, topic: str) -> bool:
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
    bootstrap: str,
    topic: str,
    out: TextIO,
    *,
    to: str | None,
    where: list[tuple[str, bytes]],
    limit: int | None,
    dry_run: bool,
    group: str,
    timeout: float,
) -> int:
    """Replay ``topic``'s records (see the command's help); the exit code.

    Offsets are committed only once every replayed record was acknowledged.
    """
    from kheaders._client.consumer import Consumer
    from kheaders._client.producer import Producer

    errors: list[KafkaError] = []  # librdkafka's, instead of its log lines on stderr
    consumer = Consumer(
        quiet(
            {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}, errors
        )
    )
    producer = (
        None
        if dry_run
        else Producer(quiet({"bootstrap.servers": bootstrap, "acks": "all"}, errors))
    )
    run = _Run(topic, to, where, producer, out)
    try:
        try:
            found = _assign_from_committed(consumer, topic)
        except KafkaException as exc:
            print(
                cannot("dlt replay", f"read topic {topic!r}", bootstrap, exc, errors),
                file=sys.stderr,
            )
            return 2
        if not found:
            print(f"kheaders dlt replay: topic {topic!r} not found", file=sys.stderr)
            return 2
        last = time.monotonic()
        while (limit is None or run.replayed < limit) and time.monotonic() - last < timeout:
            try:
                msg = consumer.poll(0.2)
            except DeserializationError as exc:  # unreadable headers: say so, pass it over
                print(f"kheaders dlt replay: {printable(str(exc))}", file=sys.stderr)
                continue
            if msg is None or msg.error() is not None:
                continue
            last = time.monotonic()
            if not run.one(msg):
                break
        if producer is not None:
            producer.flush(30)
            if run.failed or len(producer):
                print(f"kheaders dlt replay: not delivered: {run.failed[:1]}", file=sys.stderr)
                return 1  # nothing committed: a second run replays them again
            if run.done:
                offsets = [TopicPartition(topic, p, o) for p, o in run.done.items()]
                consumer.commit(offsets=offsets, asynchronous=False)
        verb = "would replay" if dry_run else "replayed"
        print(f"{verb} {run.replayed} of {run.seen} records read from {printable(topic)}", file=out)
    except KafkaException as exc:
        print(
            cannot("dlt replay", f"replay topic {topic!r}", bootstrap, exc, errors), file=sys.stderr
        )
        return 2
    finally:
        consumer.close()
        if producer is not None:
            producer.close(5)
    return run.code


class _Run:
    """One replay's progress: what was seen, sent and may be committed."""

    def __init__(
        self,
        topic: str,
        to: str | None,
        where: list[tuple[str, bytes]],
        producer: Any,
        out: TextIO,
    ) -> None:
        self.topic, self.to, self.where, self.producer, self.out = topic, to, where, producer, out
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
                    file=sys.stderr,
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
    from kheaders._client.deadletter import ORIGINAL_TIMESTAMP as KHEADERS_ORIGINAL
    from kheaders.processing.spring_headers import ORIGINAL_TIMESTAMP, decode_fixed

    for key, value in reversed(headers):
        if value is None:
            continue
        if key == ORIGINAL_TIMESTAMP:
            spring = decode_fixed(value, 8)
            if spring is not None and spring > 0:
                return spring
        elif key == KHEADERS_ORIGINAL and value.isdigit() and len(value) <= 19:
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
    from kheaders.processing import without_retry_state

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
