"""The share-group processor's overhead against a hand-written loop with the same no-op handler.

    python -m bench.share [--records N] [--rounds R] [--bootstrap HOST:PORT]

Share groups (KIP-932) need Apache Kafka 4.x (Tansu serves none): the run starts one from
Maven's jars (``kheaders.broker.ApacheKafka``) unless ``--bootstrap`` names a broker.
Contenders, each reading the same one-partition topic (3 headers, 100-byte values) as a fresh
share group set to ``share.auto.offset.reset=earliest``:

* ``loop (confluent ShareConsumer)``: what a user writes on confluent-kafka 2.16 for explicit
  acknowledgement: ``poll(0.5)``, the handler in ``try``, ``acknowledge(msg, ACCEPT)`` per
  record (RELEASE on failure); the acknowledgements travel with the next ``poll``.
* ``loop (confluent, reads headers)``: the same, the handler reading ``msg.headers()``
  first (what a handler that looks at headers pays: librdkafka's list built per record).
* ``loop (kheaders.ShareConsumer)``: the same loop on kheaders' wrapper (read-only Headers
  per record, the interceptor chain): the wrapper's share of the difference.
* ``ShareProcessor``: kheaders.processing.ShareProcessor with the no-op handler.

The clock runs from the first record handled to the last (group joins left out). Rounds
alternate the contenders; medians are reported with the ratios to the confluent loop.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import confluent_kafka
from confluent_kafka import AcknowledgeType
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

import kheaders
from bench._contest import Clock, Contender, arguments, broker, contest, fill
from kheaders.processing import ShareProcessor

FETCH_BYTES = 16 * 1024 * 1024
"""Fetch size for every contender, as bench.processing sets it (the loop, not the fetch, is
what is measured)."""


def share_group(bootstrap: str) -> str:
    """A fresh share group that starts at the beginning of the log."""
    group = f"bench-share-{uuid.uuid4().hex[:8]}"
    entry = ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET
    )
    resource = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=[entry])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.incremental_alter_configs([resource])[resource].result(30)
    return group


def _config(bootstrap: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": share_group(bootstrap),
        "share.acknowledgement.mode": "explicit",
        "fetch.max.bytes": FETCH_BYTES,
        "max.partition.fetch.bytes": FETCH_BYTES,
    }


def _noop(clock: Clock) -> Callable[[Any], None]:
    def handler(_msg: Any) -> None:
        clock.tick()

    return handler


def _reading(clock: Clock) -> Callable[[Any], None]:
    def handler(msg: Any) -> None:
        msg.headers()
        clock.tick()

    return handler


def hand_loop(
    client: type[Any], bootstrap: str, topic: str, n: int, *, headers: bool = False
) -> tuple[float, float]:
    """The explicit-acknowledgement loop on ``client`` (confluent's class or kheaders');
    ``headers``: the handler reads each record's headers."""
    clock = Clock(n)
    handler = _reading(clock) if headers else _noop(clock)
    consumer = client(_config(bootstrap))
    consumer.subscribe([topic])
    accept, release = AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE
    while not clock.done.is_set():
        for msg in consumer.poll(0.5):
            if msg.error() is not None:
                continue
            try:
                handler(msg)
            except Exception:
                consumer.acknowledge(msg, release)
                continue
            consumer.acknowledge(msg, accept)
    consumer.close()
    return clock.rate()


def processor(bootstrap: str, topic: str, n: int) -> tuple[float, float]:
    clock = Clock(n)
    config = _config(bootstrap)
    proc = ShareProcessor(config, [topic], _noop(clock), handle_signals=False)
    runner = threading.Thread(target=proc.run)
    runner.start()
    clock.done.wait()
    proc.stop()
    runner.join()
    return clock.rate()


def main() -> None:
    args = arguments(__doc__, 200_000)
    with broker(args.bootstrap, apache=True) as bootstrap:
        n = args.records
        topic = fill(bootstrap, n)
        contenders: dict[str, Contender] = {
            "loop (confluent ShareConsumer)": lambda: hand_loop(
                confluent_kafka.ShareConsumer, bootstrap, topic, n
            ),
            "loop (confluent, reads headers)": lambda: hand_loop(
                confluent_kafka.ShareConsumer, bootstrap, topic, n, headers=True
            ),
            "loop (kheaders.ShareConsumer)": lambda: hand_loop(
                kheaders.ShareConsumer, bootstrap, topic, n
            ),
            "ShareProcessor": lambda: processor(bootstrap, topic, n),
        }
        core = "compiled" if kheaders.COMPILED else "pure-Python"
        heading = (
            f"{n:,} records, 1 partition, 3 headers, no-op handler, {args.rounds} rounds;"
            f"\nkheaders' {core} core"
        )
        contest(contenders, args.rounds, heading)


if __name__ == "__main__":
    main()
