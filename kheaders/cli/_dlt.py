"""``kheaders dlt replay TOPIC``: the command over :func:`kheaders.deadletter.replay`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from kheaders._client.consumer import Consumer
from kheaders._client.producer import Producer
from kheaders._model.keys import check_name
from kheaders._model.redact import printable
from kheaders.cli._reach import bootstrap_of, cannot, quiet
from kheaders.deadletter import assign_from_committed, replay


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
    bootstrap = bootstrap_of(args, "dlt replay")
    if bootstrap is None:
        return 2
    try:
        check_name(args.topic)
        if args.to is not None:
            check_name(args.to)
        where = _where(args.where)
    except ValueError as exc:  # InvalidNameError among them
        print(f"kheaders dlt replay: {printable(str(exc))}", file=sys.stderr)
        return 2
    group = args.group or "kheaders-dlt-replay." + args.topic + "".join(
        f".{k}={v.decode('utf-8', 'replace')}" for k, v in where
    )
    errors: list[KafkaError] = []  # librdkafka's, instead of its log lines on stderr
    config = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
    consumer = Consumer(quiet(config, errors))
    producer = None
    if not args.dry_run:
        producer = Producer(quiet({"bootstrap.servers": bootstrap, "acks": "all"}, errors))
    doing = f"read topic {args.topic!r}"
    try:
        if not assign_from_committed(consumer, args.topic):
            print(f"kheaders dlt replay: topic {args.topic!r} not found", file=sys.stderr)
            return 2
        doing = f"replay topic {args.topic!r}"
        return replay(
            consumer,
            producer,
            args.topic,
            sys.stdout,
            to=args.to,
            where=where,
            limit=args.limit,
            timeout=args.timeout,
        )
    except KafkaException as exc:
        print(cannot("dlt replay", doing, bootstrap, exc, errors), file=sys.stderr)
        return 2
    finally:
        consumer.close()
        if producer is not None:
            producer.close(5)
