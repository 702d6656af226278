"""What the example services share: the broker address, the topics, the order count."""

from __future__ import annotations

import argparse
import os

from kheaders.broker import BOOTSTRAP_ENV, create_topic, wait_for_broker
from kheaders.demo import ORDERS_TOPIC, SHIPMENTS_TOPIC, bootstrap_from_env

COUNT_ENV = "DEMO_ORDERS"
"""Environment variable: how many order events the services expect (default 200)."""


def parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every service takes."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--bootstrap", default=None, help=f"bootstrap servers (default: ${BOOTSTRAP_ENV})"
    )
    p.add_argument(
        "--count",
        type=int,
        default=int(os.environ.get(COUNT_ENV, "200")),
        help=f"order events (default: ${COUNT_ENV} or 200)",
    )
    p.add_argument("--orders-topic", default=ORDERS_TOPIC)
    p.add_argument("--shipments-topic", default=SHIPMENTS_TOPIC)
    p.add_argument("--partitions", type=int, default=3, help="partitions of topics it creates")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds before giving up")
    return p


def connect(args: argparse.Namespace) -> str:
    """Wait for the broker and make sure both topics exist; return the bootstrap servers."""
    bootstrap = bootstrap_from_env(args.bootstrap)
    wait_for_broker(bootstrap, timeout=args.timeout)
    for topic in (args.orders_topic, args.shipments_topic):
        create_topic(bootstrap, topic, partitions=args.partitions)
    return bootstrap
