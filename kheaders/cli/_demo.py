"""``kheaders demo``: order and shipping services over Kafka, one trace across both hops,
audited, then the Spark pipeline over their topics."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def register(subparsers: Any) -> None:
    """Add the ``demo`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="run order/shipping services over Kafka, audit their traces, then Spark",
        description=(
            "Start the embedded broker (or use --bootstrap), run an order service and a shipping"
            " service that talk only through Kafka (tracing, client id, correlation id and"
            " version-stamp interceptors), audit both topics (trace ids continuous across hops,"
            " client ids, latency per hop, records in = out), then run the Spark pipeline"
            " (KIP-280 compaction of orders by the version header, trace report) when pyspark is"
            " installed. Exits 1 when a record is missing or a trace is broken."
        ),
    )
    parser.add_argument(
        "--bootstrap",
        default=None,
        help="an existing cluster's bootstrap servers (default: start the embedded broker);"
        " topics get a unique suffix there",
    )
    parser.add_argument("--orders", type=_positive, default=200, help="order events (default 200)")
    parser.add_argument("--partitions", type=_positive, default=3, help="partitions per topic")
    parser.add_argument("--no-spark", action="store_true", help="skip the Spark pipeline")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds each service may take (default 60)"
    )
    parser.add_argument(
        "--show", type=int, default=10, help="trace lines to print (default 10; -1: all)"
    )
    parser.add_argument("--drop", type=int, default=0, help=argparse.SUPPRESS)  # fault injection
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; 0 when every record arrived and every trace is whole, 1 otherwise."""
    from kheaders._errors import KHeadersError
    from kheaders.demo._run import DemoOptions, run_demo

    options = DemoOptions(
        bootstrap=args.bootstrap,
        orders=args.orders,
        partitions=args.partitions,
        spark=not args.no_spark,
        timeout=args.timeout,
        show=args.show if args.show >= 0 else args.orders,
        drop=args.drop,
    )
    try:
        return run_demo(options, sys.stdout)
    except KHeadersError as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 2
