"""``kheaders broker``: run the embedded broker in the foreground and print its address."""

from __future__ import annotations

import argparse
import secrets
import signal
import threading
from typing import Any

FIRST_CONSUMER_HINT = (
    "consumer groups: with librdkafka's defaults a group join here takes about 23 s; build a "
    "subscribing consumer's config with kheaders.broker.fast_consumer_config(bootstrap, "
    "group_id) (joins in about 3 s), or assign() partitions (no join)"
)
"""Printed under the address: a first consumer would otherwise print nothing for 20 s."""


def new_cluster_id() -> str:
    """``kheaders-`` and 12 random hex digits: Tansu's own default (``tansu_cluster``) is the
    same for every broker, which would make any two of them one cluster to a mirror."""
    return f"kheaders-{secrets.token_hex(6)}"


def register(subparsers: Any) -> None:
    """Add the ``broker`` subcommand."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "broker",
        help="start the embedded Kafka-compatible broker (Tansu) and print its address",
        description="Start the embedded broker (memory storage) on loopback until interrupted.",
    )
    parser.add_argument("--port", type=int, default=None, help="port (default: a free one)")
    parser.add_argument(
        "--cluster-id",
        default=None,
        help="the cluster id metadata reports (default: kheaders-<random>, new at each start,"
        " so two brokers are two clusters to `kheaders mirror`)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Start the broker, print ``bootstrap.servers``, wait for SIGINT/SIGTERM, stop it."""
    from kheaders.broker._finder import EmbeddedBroker

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    cluster_id = args.cluster_id or new_cluster_id()
    with EmbeddedBroker(args.port, cluster_id=cluster_id) as broker:
        print(f"bootstrap.servers={broker.bootstrap}", flush=True)
        print(f"cluster.id={cluster_id}", flush=True)
        print(FIRST_CONSUMER_HINT, flush=True)
        try:
            while not stop.wait(0.5):
                if not broker.running:
                    print("embedded broker exited", flush=True)
                    return 1
        except KeyboardInterrupt:
            pass
    return 0
