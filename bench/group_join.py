"""Group join time: the classic protocol against KIP-848's ``group.protocol=consumer``.

For each contender, a fresh group subscribes to a 4-partition topic holding records and the
time from ``subscribe()`` to the first record is taken (the join, the assignment and one
fetch); then a second member joins and the time until both hold partitions is taken (a
rebalance). Medians over ``--rounds``; each figure is also given as a ratio to classic with
librdkafka's defaults on the same broker, in the same run. Apache Kafka runs all three
contenders; the embedded Tansu broker, which serves no KIP-848 groups, runs the classic ones.

    python -m bench.group_join --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Producer

from kheaders.broker import ApacheKafka, EmbeddedBroker, create_topic

CONTENDERS: dict[str, dict[str, Any]] = {
    "classic, librdkafka defaults": {"group.protocol": "classic"},
    "classic, 6 s session": {
        "group.protocol": "classic",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
    },
    "consumer (KIP-848)": {"group.protocol": "consumer"},
}


def _wait(predicate: Callable[[], bool], timeout: float = 120.0) -> float:
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("no assignment within the timeout")
    return time.perf_counter() - start


def measure(bootstrap: str, topic: str, settings: dict[str, Any]) -> tuple[float, float]:
    """(seconds to the first record, seconds until a second member shares the partitions)."""
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": f"join-{uuid.uuid4().hex[:8]}",
        "auto.offset.reset": "earliest",
        "log_level": 0,
        **settings,
    }
    first = Consumer(config)
    second = Consumer(config)
    try:
        first.subscribe([topic])
        joined = _wait(lambda: first.poll(0.05) is not None)
        second.subscribe([topic])

        def shared() -> bool:
            first.poll(0.05)
            second.poll(0.05)
            return bool(first.assignment()) and bool(second.assignment())

        rebalanced = _wait(shared)
    finally:
        second.close()
        first.close()
    return joined, rebalanced


def run(broker_name: str, bootstrap: str, rounds: int, kip848: bool) -> list[str]:
    topic = create_topic(bootstrap, f"join-{uuid.uuid4().hex[:6]}", partitions=4)
    producer = Producer({"bootstrap.servers": bootstrap})
    for n in range(100):
        producer.produce(topic, b"v", partition=n % 4)
    producer.flush(30)
    medians: dict[str, tuple[float, float]] = {}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in CONTENDERS}
    for _ in range(rounds):
        for name, settings in CONTENDERS.items():
            if settings["group.protocol"] == "consumer" and not kip848:
                continue
            samples[name].append(measure(bootstrap, topic, settings))
    for name, got in samples.items():
        if got:
            medians[name] = (
                statistics.median(j for j, _ in got),
                statistics.median(r for _, r in got),
            )
    base_join, base_rebalance = medians["classic, librdkafka defaults"]
    lines = []
    for name, (join, rebalance) in medians.items():
        lines.append(
            f"| {broker_name} | {name} | {join:.2f} s ({join / base_join:.2f}x) |"
            f" {rebalance:.2f} s ({rebalance / base_rebalance:.2f}x) |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.group_join", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    rows = [
        "| broker | group protocol | first record | second member shares |",
        "|---|---|---|---|",
    ]
    with ApacheKafka() as kafka:
        rows += run("Apache Kafka", kafka.bootstrap, args.rounds, kip848=True)
    with EmbeddedBroker() as tansu:
        rows += run("Tansu", tansu.bootstrap, args.rounds, kip848=False)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
