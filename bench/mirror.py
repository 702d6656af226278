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
commit a second), to show which share of the gap is the guarantee and which is the Mirror;
``raw-idempotent`` is the raw loop with the idempotent producer only (no callbacks, no
commits): the share of the producer's idempotence.

``--icount N`` counts instead, under callgrind, the instructions per record of the Mirror's
Python side (fake clients; stable where wall-clock ratios on a busy machine are not).
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
IN_FLIGHT_1 = {"enable.idempotence": False, "max.in.flight.requests.per.connection": 1}
"""A target producer that keeps order across retries without idempotence (retries may write
duplicates, which the message id shows)."""


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
    source: str,
    target: str,
    topic: str,
    out_topic: str,
    records: int,
    *,
    safe: bool = False,
    idempotent: bool = False,
) -> float:
    """Seconds for the raw loop to copy ``records`` records (first read to last delivered).

    ``safe``: what at-least-once needs at the least, still raw: an idempotent producer that
    never gives up, a delivery callback per record, a synchronous commit a second.
    ``idempotent``: that producer only.
    """
    consumer = Consumer(
        {"bootstrap.servers": source, "group.id": "bench-raw", "enable.auto.commit": False}
    )
    meta = consumer.list_topics(topic, timeout=10).topics[topic]
    consumer.assign([TopicPartition(topic, p, 0) for p in meta.partitions])
    idempotence = {"enable.idempotence": True, "message.timeout.ms": 0}
    extra = idempotence if safe or idempotent else {}
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


def mirror_copy(
    source: str,
    target: str,
    topic: str,
    table: RoutingTable,
    records: int,
    producer_config: dict[str, Any] | None = None,
) -> float:
    """Seconds for a Mirror to copy ``records`` records (first acknowledged to last)."""
    mirror = Mirror(
        {
            "bootstrap.servers": source,
            "group.id": f"bench-{uuid.uuid4().hex[:6]}",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
        },
        target,
        [topic],
        table,
        producer_config={**PRODUCER, **(producer_config or {})},
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


def _icount_child(built: int, records: int, with_rules: bool) -> None:
    """Copy ``records`` of ``built`` records through a Mirror whose clients are fakes (the
    Python side only): the consumer hands out prebuilt records in batches of 1,000, the
    producer queues each record's report and serves it at the next ``poll``."""
    import confluent_kafka

    from kheaders.mirror._setup import Plan

    topic = "bench"
    messages = [
        confluent_kafka.Message(
            topic=topic,
            partition=i % 2,
            offset=i // 2,
            key=b"k%d" % (i % 1000),
            value=b"v" * 100,
            headers=[
                ("traceparent", TRACEPARENT),
                ("client.id", b"bench"),
                ("content-type", b"application/octet-stream"),
                ("kheaders.message.id", b"0" * 16),
            ],
            timestamp=(confluent_kafka.TIMESTAMP_CREATE_TIME, 1_700_000_000_000 + i),
        )
        for i in range(built)
    ][:records]
    report = confluent_kafka.Message(topic=topic + "-routed", partition=0, offset=0)
    mirror: Any = None

    class FakeConsumer:
        def __init__(self, _config: object) -> None:
            self.at = 0

        def subscribe(self, _topics: object, on_assign: Any = None, **_: object) -> None:
            on_assign(self, [TopicPartition(topic, 0), TopicPartition(topic, 1)])

        def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:
            batch = messages[self.at : self.at + min(num_messages, 1000)]
            self.at += len(batch)
            if not batch:
                mirror.stop()
            return batch

        def poll(self, timeout: float = -1) -> None:
            return None

        def commit(self, **_: object) -> None:
            return None

        def committed(self, partitions: list[TopicPartition], **_: object) -> list[Any]:
            return partitions  # nothing committed yet

        def assignment(self) -> list[TopicPartition]:
            return []

        def get_watermark_offsets(self, _tp: object, **_: object) -> tuple[int, int]:
            return 0, records

        def close(self) -> None:
            return None

    class FakeProducer:
        def __init__(self, _config: object) -> None:
            self.queue: list[Any] = []

        def produce(self, *_: object, on_delivery: Any = None, **__: object) -> None:
            self.queue.append(on_delivery)

        def poll(self, _timeout: float = -1) -> int:
            queue, self.queue = self.queue, []
            for callback in queue:
                callback(None, report)
            return len(queue)

        def flush(self, _timeout: float = -1) -> int:
            self.poll(0)
            return 0

        def purge(self) -> None:
            self.queue.clear()

        def __len__(self) -> int:
            return len(self.queue)

    confluent_kafka.Consumer = FakeConsumer  # type: ignore[misc,assignment]
    confluent_kafka.Producer = FakeProducer  # type: ignore[misc,assignment]
    table = rules(topic) if with_rules else RoutingTable()
    found = Plan("bench-a", "bench-b", (topic,), {topic + "-routed": 2, topic: 2}, {})
    mirror = Mirror("a:9092", "b:9092", [topic], table, max_in_flight=100_000)

    def check() -> Plan:
        mirror.plan = found
        return found

    mirror.check = check
    mirror.run()
    assert mirror.stats.total("sent") == records, mirror.stats.counts


def icount(records: int) -> dict[str, float]:
    """Instructions per record (callgrind) of a Mirror copying through fake clients, without
    and with the three rules: the difference between ``records`` records and none."""
    import re
    import subprocess
    import sys

    def count(n: int, with_rules: bool) -> int:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
        cmd += ["-m", "bench.mirror", "--icount-child", str(records), str(n), str(int(with_rules))]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
        if done.returncode != 0 or found is None:
            raise RuntimeError(f"callgrind run failed: {done.stderr[-2000:]}")
        return int(found.group(1))

    return {
        name: (count(records, with_rules) - count(0, with_rules)) / records
        for name, with_rules in (("mirror", False), ("mirror+rules", True))
    }


def main(argv: list[str] | None = None) -> int:
    """Run the comparison; print the table and the median ratio."""
    parser = argparse.ArgumentParser(prog="python -m bench.mirror", description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"))
    parser.add_argument(
        "--icount", type=int, metavar="N", help="instructions per record over N fake records"
    )
    parser.add_argument("--icount-child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.icount_child:
        built, copied, with_rules = args.icount_child
        _icount_child(built, copied, bool(with_rules))
        return 0
    if args.icount:
        for name, per_record in icount(args.icount).items():
            print(f"{name}: {per_record:,.0f} instructions per record")
        return 0
    a = EmbeddedBroker(cluster_id="bench-a").start()
    b = EmbeddedBroker(cluster_id="bench-b").start()
    names = ("raw", "raw-idempotent", "raw-safe", "mirror", "mirror+rules", "mirror-in-flight-1")
    samples: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names[1:]}
    try:
        for round_ in range(args.rounds):
            topic = f"bench-mirror-{uuid.uuid4().hex[:8]}"
            create_topic(a.bootstrap, topic, partitions=args.partitions)
            create_topic(a.bootstrap, topic + ".dlt")
            for suffix in ("", "-raw", "-idempotent", "-safe", "-routed", "-one"):
                create_topic(b.bootstrap, topic + suffix, partitions=args.partitions)
            produce(a.bootstrap, topic, args.records)
            runs = {
                "raw": lambda t=topic: raw_copy(
                    a.bootstrap, b.bootstrap, t, t + "-raw", args.records
                ),
                "raw-idempotent": lambda t=topic: raw_copy(
                    a.bootstrap, b.bootstrap, t, t + "-idempotent", args.records, idempotent=True
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
                "mirror-in-flight-1": lambda t=topic: mirror_copy(
                    a.bootstrap,
                    b.bootstrap,
                    t,
                    RoutingTable(default="{topic}-one"),
                    args.records,
                    IN_FLIGHT_1,
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
