"""Quick overhead check of kheaders.Producer/Consumer against raw confluent-kafka, same process.

    python bench/clients_overhead.py [BOOTSTRAP] [RECORDS]

Produce: 3 headers as a list of tuples, no interceptors/serializers; rounds alternate between
the raw and the kheaders producer and the best round of each is compared: enqueue only (CPU
time of the producing thread, which a busy machine disturbs least), then enqueue + flush to
the broker (wall clock). Consume: the same records read back with ``consume(1000)``
reading ``headers()`` of each record. Without BOOTSTRAP a broker is found or started.
"""

from __future__ import annotations

import sys
import time
import uuid

import confluent_kafka
from confluent_kafka import TopicPartition

import kheaders
from kheaders.broker import create_topic, find_or_start_broker

HEADERS = [("trace", b"0123456789abcdef"), ("client", b"svc-a"), ("ver", b"\x00\x00\x00\x01")]
VALUE = b"v" * 100


def produce_rounds(bootstrap: str, topic: str, n: int, flush: bool) -> dict[str, float]:
    """Best seconds for ``n`` records: raw with ``headers=`` (as users call it), raw with all
    eight arguments positional (librdkafka's cheapest call), and kheaders with ``headers=``."""
    conf = {
        "bootstrap.servers": bootstrap,
        "queue.buffering.max.messages": 2_000_000,
        "queue.buffering.max.kbytes": 4_000_000,
        "linger.ms": 50,
    }
    raw = confluent_kafka.Producer(conf)
    kh = kheaders.Producer(conf)
    best = {"raw": float("inf"), "raw-positional": float("inf"), "kheaders": float("inf")}
    order = [("raw", raw), ("raw-positional", raw), ("kheaders", kh)]
    for i in range(9):
        for name, p in order[i % 3 :] + order[: i % 3]:  # rotate: no one always goes last
            produce = p.produce
            clock = time.perf_counter if flush else time.thread_time  # enqueue: our CPU only
            t = clock()
            if name == "raw-positional":
                for _ in range(n):
                    produce(topic, VALUE, b"key", -1, None, None, 0, HEADERS)
            else:
                for _ in range(n):
                    produce(topic, VALUE, b"key", headers=HEADERS)
            if flush:
                p.flush(120)
            best[name] = min(best[name], clock() - t)
            if not flush:
                p.purge()
                p.poll(0)
    kh.close(30)
    raw.flush(30)
    return best


def consume_round(bootstrap: str, topic: str, n: int, wrap: bool) -> float:
    raw = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex, "enable.auto.commit": False}
    )
    c = kheaders.wrap_consumer(raw) if wrap else raw
    c.assign([TopicPartition(topic, 0, 0)])
    got = 0
    t = time.perf_counter()
    while got < n:
        for m in c.consume(1000, 1.0):
            m.headers()
            got += 1
    dt = time.perf_counter() - t
    c.close()
    return dt


def main() -> None:
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    broker = None
    if len(sys.argv) > 1:
        bootstrap = sys.argv[1]
    else:
        broker = find_or_start_broker()
        bootstrap = broker.bootstrap
    try:
        topic = create_topic(bootstrap, f"bench-{uuid.uuid4().hex[:8]}", partitions=1)
        for flush in (False, True):
            best = produce_rounds(bootstrap, topic, n, flush)
            k = best["kheaders"]
            label = "produce+flush" if flush else "produce (enqueue)"
            print(f"{label:18} kheaders {k / n * 1e6:.3f} us/rec")
            for name in ("raw", "raw-positional"):
                r = best[name]
                print(f"{'':18} {name:14} {r / n * 1e6:.3f} us/rec  ratio raw/kheaders {r / k:.3f}")
        best = {True: float("inf"), False: float("inf")}
        for _ in range(3):
            for wrap in (False, True):
                best[wrap] = min(best[wrap], consume_round(bootstrap, topic, n, wrap))
        r, k = best[False], best[True]
        print(
            f"{'consume(1000)':18} raw {n / r:,.0f} rec/s  kheaders {n / k:,.0f} rec/s"
            f"  ratio {r / k:.3f}"
        )
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
