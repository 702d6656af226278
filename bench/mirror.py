"""Mirror throughput: ``kheaders.mirror.Mirror`` vs a raw confluent-kafka consume-produce loop.

Run ``python -m bench.mirror [--records 100000] [--rounds 3]``: two embedded Tansu brokers
(cluster ids ``bench-a`` and ``bench-b``); the records (100-byte values, keys from a set of
1,000, 4 headers: traceparent, client.id, content-type, a message id) are produced on A once
per round into a fresh topic; then each contender copies that topic to B, in alternating
order. Timed: from the first record read to the last acknowledged by B (the Mirror's group
join and start-time checks are left out; the raw loop has no group). Prints records/s, the
ratio to raw per round and the median ratios; writes JSON to ``--out``.

The raw loop is the least a copy can do: ``consume(1000)``, ``produce(topic, value, key,
partition, headers=msg.headers(), timestamp=...)`` per record, no delivery callbacks, no
offset commits, ``flush()`` at the end. The Mirror also routes, stamps provenance, tracks
each record's acknowledgement and commits offsets; ``raw-safe`` is the raw loop with what
at-least-once needs at the least (idempotent producer, a delivery callback per record, a
commit a second), to show which share of the gap is the guarantee and which is the Mirror.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from kheaders.broker import EmbeddedBroker, create_topic
from kheaders.mirror import Mirror, Route, RoutingTable, uuid7_bytes

ROOT = Path(__file__).resolve().parents[1]
TRACEPARENT = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
PRODUCER = {"linger.ms": 5, "queue.buffering.max.messages": 2_000_000}


def produce(bootstrap: str, topic: str, records: int) -> None:
    """``records`` records with 4 headers on ``topic``, generated before sending."""
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER})
    value = os.urandom(100)
    for i in range(records):
        headers: list[tuple[str, str | bytes | None]] = [
            ("traceparent", TRACEPARENT),
            ("client.id", b"bench"),
            ("content-type", b"application/octet-stream"),
            ("kheaders.message.id", uuid7_bytes()),
        ]
        while True:
            try:
                producer.produce(topic, value, b"k%d" % (i % 1000), headers=headers)
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(120)


def raw_copy(
    source: str, target: str, topic: str, out_topic: str, records: int, *, safe: bool = False
) -> float:
    """Seconds for the raw loop to copy ``records`` records (first read to last delivered).

    ``safe``: what at-least-once needs at the least, still raw: an idempotent producer that
    never gives up, a delivery callback per record, a synchronous commit a second.
    """
    consumer = Consumer(
        {"bootstrap.servers": source, "group.id": "bench-raw", "enable.auto.commit": False}
    )
    meta = consumer.list_topics(topic, timeout=10).topics[topic]
    consumer.assign([TopicPartition(topic, p, 0) for p in meta.partitions])
    extra = {"enable.idempotence": True, "message.timeout.ms": 0} if safe else {}
    producer = Producer({"bootstrap.servers": target, **PRODUCER, **extra})
    produce_ = producer.produce
    acknowledged = [0]

    def delivered(_msg: object, err: object, _report: object) -> None:
        if err is None:
            acknowledged[0] += 1

    callbacks: dict[str, Any] = {}
    seen = 0
    began = 0.0
    next_commit = time.monotonic() + 1.0
    while seen < records:
        batch = consumer.consume(1000, 1.0)
        if batch and not began:
            began = time.perf_counter()
        msg: Any
        for msg in batch:
            if safe:
                callbacks = {"on_delivery": functools.partial(delivered, msg)}
            while True:
                try:
                    produce_(
                        out_topic,
                        msg.value(),
                        msg.key(),
                        msg.partition(),
                        headers=msg.headers(),
                        timestamp=msg.timestamp()[1],
                        **callbacks,
                    )
                    break
                except BufferError:
                    producer.poll(0.05)
        seen += len(batch)
        producer.poll(0)
        if safe and batch and time.monotonic() > next_commit:
            last: Any = batch[-1]
            done = [TopicPartition(topic, last.partition(), last.offset() + 1)]
            consumer.commit(offsets=done, asynchronous=False)
            next_commit = time.monotonic() + 1.0
    producer.flush(120)
    elapsed = time.perf_counter() - began
    consumer.close()
    return elapsed


def mirror_copy(source: str, target: str, topic: str, table: RoutingTable, records: int) -> float:
    """Seconds for a Mirror to copy ``records`` records (first acknowledged to last)."""
    mirror = Mirror(
        source,
        target,
        [topic],
        table,
        group_id=f"bench-{uuid.uuid4().hex[:6]}",
        consumer_config={"session.timeout.ms": 6000, "heartbeat.interval.ms": 500},
        producer_config=PRODUCER,
        max_in_flight=100_000,
    )
    thread = threading.Thread(target=mirror.run, daemon=True)
    thread.start()
    began = 0.0
    while mirror.stats.total("sent") < records:
        if not began and mirror.in_flight:
            began = time.perf_counter()
        time.sleep(0.002)
    elapsed = time.perf_counter() - began
    mirror.stop()
    thread.join(120)
    return elapsed


def rules(topic: str) -> RoutingTable:
    """Three rules on headers no record matches, then the default (every rule tried)."""
    return RoutingTable(
        [
            Route({"content-type": "application/json"}, to=None, name="json"),
            Route({"client.id": ["other", "another"]}, to=None, name="others"),
            Route({"tenant": True}, to=None, name="tenanted"),
        ],
        default="{topic}-routed",
    )


def main(argv: list[str] | None = None) -> int:
    """Run the comparison; print the table and the median ratio."""
    parser = argparse.ArgumentParser(prog="python -m bench.mirror", description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = parser.parse_args(argv)
    a = EmbeddedBroker(cluster_id="bench-a").start()
    b = EmbeddedBroker(cluster_id="bench-b").start()
    samples: dict[str, list[float]] = {"raw": [], "raw-safe": [], "mirror": [], "mirror+rules": []}
    ratios: dict[str, list[float]] = {"raw-safe": [], "mirror": [], "mirror+rules": []}
    try:
        for round_ in range(args.rounds):
            topic = f"bench-mirror-{uuid.uuid4().hex[:8]}"
            create_topic(a.bootstrap, topic, partitions=args.partitions)
            create_topic(a.bootstrap, topic + ".dlt")
            for suffix in ("", "-raw", "-safe", "-routed"):
                create_topic(b.bootstrap, topic + suffix, partitions=args.partitions)
            produce(a.bootstrap, topic, args.records)
            runs = {
                "raw": lambda t=topic: raw_copy(
                    a.bootstrap, b.bootstrap, t, t + "-raw", args.records
                ),
                "raw-safe": lambda t=topic: raw_copy(
                    a.bootstrap, b.bootstrap, t, t + "-safe", args.records, safe=True
                ),
                "mirror": lambda t=topic: mirror_copy(
                    a.bootstrap, b.bootstrap, t, RoutingTable(), args.records
                ),
                "mirror+rules": lambda t=topic: mirror_copy(
                    a.bootstrap, b.bootstrap, t, rules(t), args.records
                ),
            }
            order = list(runs) if round_ % 2 == 0 else list(reversed(runs))
            took = {name: runs[name]() for name in order}
            for name, seconds in took.items():
                samples[name].append(args.records / seconds)
            for name, found in ratios.items():
                found.append(took["raw"] / took[name])
            print(
                f"round {round_ + 1}: "
                + ", ".join(f"{n} {args.records / s:,.0f} rec/s" for n, s in took.items())
                + " | "
                + ", ".join(f"{n}/raw {r[-1]:.2f}x" for n, r in ratios.items()),
                flush=True,
            )
    finally:
        a.stop()
        b.stop()
    result = {
        "records": args.records,
        "rounds": args.rounds,
        "partitions": args.partitions,
        "records_per_second": {n: statistics.median(v) for n, v in samples.items()},
        "ratio_to_raw": {n: statistics.median(v) for n, v in ratios.items()},
        "samples": samples,
        "ratios": ratios,
        "load_average": os.getloadavg(),
    }
    print(
        "\nmedian records/s: "
        + ", ".join(f"{n} {v:,.0f}" for n, v in result["records_per_second"].items())
    )
    for name, ratio in result["ratio_to_raw"].items():
        verdict = "MET" if ratio >= 0.8 else "MISSED"
        print(f"{name}/raw throughput: {ratio:.2f}x (target >= 0.8x: {verdict})")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "mirror.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
