"""``kheaders mirror``: copy topics between two clusters, routed on headers (docs/mirror.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

_DESCRIPTION = (
    "Copy records from a source cluster to a target cluster byte for byte (key, value,"
    " timestamp, headers), routed by header rules, with provenance and hops headers that keep"
    " active-active pairs loop-free; at least once. Stops on SIGINT/SIGTERM after draining."
)


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def register(subparsers: Any) -> None:
    """Add the ``mirror`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "mirror", help="mirror topics between clusters, routed on headers", description=_DESCRIPTION
    )
    parser.add_argument("--source", required=True, help="source bootstrap servers")
    parser.add_argument("--target", required=True, help="target bootstrap servers")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--topic", action="append", help="a source topic (repeatable)")
    which.add_argument("--pattern", help="a regex of source topics, starting with ^")
    parser.add_argument("--rules", help="routing rules file (.json, else TOML)")
    parser.add_argument("--group", default="kheaders-mirror", help="source consumer group")
    parser.add_argument("--partitioning", choices=("same", "key"), default="same")
    parser.add_argument("--source-name", help="the source's cluster id in hops (default: its own)")
    parser.add_argument("--target-name", help="the target's cluster id in hops (default: its own)")
    parser.add_argument(
        "--dead-letter",
        default="{topic}-dlt",
        help="dead-letter topic on the source ({topic} = source topic; default {topic}-dlt,"
        " created with the source topic's partition count when missing and allowed)",
    )
    parser.add_argument("--dead-letter-topic", help=argparse.SUPPRESS)  # the old name
    parser.add_argument("--max-in-flight", type=int, default=10_000)
    parser.add_argument("--commit-interval", type=float, default=1.0, help="seconds")
    parser.add_argument(
        "--idle-timeout", type=float, default=None, help="stop after this many idle seconds"
    )
    parser.add_argument(
        "-X", dest="consumer", action="append", type=_setting, default=[],
        help="source consumer setting KEY=VALUE (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "-P", dest="producer", action="append", type=_setting, default=[],
        help="target producer setting KEY=VALUE (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--check",
        action="store_true",
        help="check rules and topics against both clusters, list every problem found, exit",
    )
    parser.add_argument(
        "--create-topics",
        action="store_true",
        help="create missing target topics (on the target) with their source topic's"
        " partition count, instead of refusing them",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check, then mirror until a signal (or ``--idle-timeout``); 2 on a configuration error."""
    from kheaders._errors import BrokerUnavailableError, ConfigurationError
    from kheaders.mirror import Mirror, RoutingTable, load_rules

    if args.dead_letter_topic is not None:
        print(
            "kheaders mirror: --dead-letter-topic is deprecated (removed in the next release):"
            " use --dead-letter",
            file=sys.stderr,
        )
        args.dead_letter = args.dead_letter_topic
    try:
        table = load_rules(args.rules) if args.rules else RoutingTable()
        mirror = Mirror(
            {"bootstrap.servers": args.source, "group.id": args.group, **dict(args.consumer)},
            args.target,
            args.pattern or args.topic,
            table,
            partitioning=args.partitioning,
            source_name=args.source_name,
            target_name=args.target_name,
            dead_letter=args.dead_letter,
            max_in_flight=args.max_in_flight,
            commit_interval=args.commit_interval,
            producer_config=dict(args.producer),
        )
        plan = mirror.check(create_topics=args.create_topics)
    except (ConfigurationError, BrokerUnavailableError, OSError) as exc:
        print(f"kheaders mirror: {exc}", file=sys.stderr)
        return 2
    print(
        f"mirror {plan.source_id} -> {plan.target_id}: {', '.join(plan.source_topics)}",
        flush=True,
    )
    if args.check:
        return 0
    mirror.run(idle_timeout=args.idle_timeout)  # SIGTERM and SIGINT stop it (drained)
    counts = mirror.stats.counts
    for (route, outcome, source, target), n in sorted(counts.items()):
        print(f"{route}\t{outcome}\t{source} -> {target}\t{n}", flush=True)
    return 0
