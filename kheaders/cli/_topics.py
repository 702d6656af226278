"""``kheaders topics create|list|describe``: a cluster's topics, their partitions and configs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from kheaders._errors import BrokerUnavailableError, ConfigurationError, InvalidNameError
from kheaders._model.keys import check_name
from kheaders._model.redact import REDACTED, printable
from kheaders.cli._reach import bootstrap_of, quiet, unreachable

_TIMEOUT = 10.0


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def register(subparsers: Any) -> None:
    """Add the ``topics`` subcommand (``create``, ``list``, ``describe``)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "topics",
        help="create, list and describe topics",
        description="A cluster's topics: create one, list them, describe partitions and configs.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create",
        help="create a topic (nothing to do when it exists with that many partitions)",
        description=(
            "Create TOPIC and wait until every partition is visible. A topic that exists with"
            " the same partition count is left as it is; one with another count is an error."
        ),
    )
    create.add_argument("topic", metavar="TOPIC")
    create.add_argument("--partitions", type=int, default=1, metavar="N", help="default 1")
    create.add_argument(
        "--replication-factor",
        type=int,
        default=-1,
        metavar="N",
        help="default: the broker's default.replication.factor",
    )
    create.add_argument(
        "--config",
        action="append",
        type=_setting,
        default=[],
        metavar="KEY=VALUE",
        help="a topic config, e.g. cleanup.policy=compact (repeatable)",
    )
    listing = actions.add_parser("list", help="topic names and partition counts")
    listing.add_argument("--all", action="store_true", help="internal topics (__*) too")
    describe = actions.add_parser(
        "describe",
        help="partitions (leader, replicas, in-sync) and configs of topics",
        description=(
            "Each TOPIC's partitions and every config the broker describes for it, with its"
            " source (sensitive values redacted)."
        ),
    )
    describe.add_argument("topics", nargs="+", metavar="TOPIC")
    for sub in (create, listing, describe):
        sub.add_argument("--bootstrap", default=None, help="default: $KHEADERS_BOOTSTRAP")
        sub.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the action; 0 when done, 2 on a bad argument or an unreachable broker."""
    command = f"topics {args.action}"
    bootstrap = bootstrap_of(args, command)
    if bootstrap is None:
        return 2
    try:
        names = {"create": [getattr(args, "topic", "")], "describe": getattr(args, "topics", [])}
        for name in names.get(args.action, []):
            check_name(name)
        if args.action == "create":
            return _create(bootstrap, args)
        return _list(bootstrap, args) if args.action == "list" else _describe(bootstrap, args)
    except (InvalidNameError, ConfigurationError, BrokerUnavailableError) as exc:
        print(f"kheaders {command}: {printable(str(exc))}", file=sys.stderr)
        return 2


def _admin(bootstrap: str, errors: list[KafkaError]) -> Any:
    from confluent_kafka.admin import AdminClient

    return AdminClient(quiet({"bootstrap.servers": bootstrap}, errors))


def _metadata(admin: Any, bootstrap: str, errors: list[KafkaError], doing: str) -> Any:
    try:
        return admin.list_topics(timeout=_TIMEOUT)
    except KafkaException as exc:
        raise BrokerUnavailableError(unreachable(doing, bootstrap, exc, errors)) from exc


def _create(bootstrap: str, args: argparse.Namespace) -> int:
    from kheaders.broker import create_topic

    errors: list[KafkaError] = []
    meta = _metadata(_admin(bootstrap, errors), bootstrap, errors, f"read topic {args.topic!r}")
    existing = meta.topics.get(args.topic)
    create_topic(
        bootstrap,
        args.topic,
        partitions=args.partitions,
        config=dict(args.config),
        replication_factor=args.replication_factor,
        timeout=_TIMEOUT,
    )
    done = "exists" if existing is not None and existing.error is None else "created"
    print(f"{printable(args.topic)}: {done}, {args.partitions} partitions")
    return 0


def _list(bootstrap: str, args: argparse.Namespace) -> int:
    errors: list[KafkaError] = []
    meta = _metadata(_admin(bootstrap, errors), bootstrap, errors, "list topics")
    for name in sorted(meta.topics):
        topic = meta.topics[name]
        if topic.error is not None or (name.startswith("__") and not args.all):
            continue
        print(f"{printable(name)}\t{len(topic.partitions)} partitions")
    return 0


def _describe(bootstrap: str, args: argparse.Namespace) -> int:
    errors: list[KafkaError] = []
    admin = _admin(bootstrap, errors)
    meta = _metadata(admin, bootstrap, errors, "describe topics")
    missing = [t for t in args.topics if t not in meta.topics or meta.topics[t].error is not None]
    if missing:
        names = ", ".join(repr(t) for t in missing)
        raise ConfigurationError(f"topics: not on the cluster at {bootstrap}: {names}")
    for name in args.topics:
        topic = meta.topics[name]
        print(f"{printable(name)}: {len(topic.partitions)} partitions")
        for pid in sorted(topic.partitions):
            p = topic.partitions[pid]
            print(f"  partition {pid}: leader {p.leader}, replicas {p.replicas}, in-sync {p.isrs}")
        for line in _configs(admin, name):
            print(f"  {line}")
    return 0


def _configs(admin: Any, topic: str) -> list[str]:
    """``config key=value (source)`` lines, every config the broker describes (sensitive
    values redacted); one line saying why when it describes none."""
    from confluent_kafka.admin._config import ConfigResource, ConfigSource

    future = admin.describe_configs([ConfigResource("topic", topic)])
    try:
        entries = next(iter(future.values())).result(timeout=_TIMEOUT)
    except (KafkaException, TimeoutError) as exc:
        return [f"configs: not available ({printable(str(exc))})"]
    lines = []
    for key in sorted(entries):
        entry = entries[key]
        value = REDACTED if entry.is_sensitive else printable(str(entry.value))
        try:
            source = ConfigSource(entry.source).name.lower()
        except ValueError:
            source = "-"
        lines.append(f"config {printable(key)}={value} ({source})")
    return lines or ["configs: none described"]
