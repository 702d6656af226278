"""kheaders.protect: produce and consume of 1 KB values, protected against the same unprotected.

    python -m bench.protect [--bootstrap HOST:PORT] [--records N] [--rounds R]

Contenders, each a kheaders client on the same broker in the same process (rounds alternate,
the best round of each counts): ``plain`` (no serializers: the clients' lean path),
``serialized`` (pass-through Bytes key and value (de)serializers: the path every record with
a serializer takes, unprotected), ``encrypted`` (AES-256-GCM through RecordKeySerializer +
ProtectedSerializer, one bound header), and ``encrypted+signed`` (also Ed25519).
Produce is timed from the first ``produce`` to the end of ``flush`` (wall clock);
consume from ``assign`` to the last record of ``consume(1000)`` batches (values read). Both are
also given in CPU time of the calling thread (kheaders' and the protection's own work,
which a busy machine disturbs less than wall clock). The
target (>= 0.5x each way) is for ``encrypted`` against ``serialized``, the same client
unprotected (ratios against ``plain`` are printed too); ``encrypted+signed`` is reported: an Ed25519
signature costs tens of µs by itself. Without --bootstrap a broker is found or started.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import TopicPartition

from kheaders import BytesDeserializer, BytesSerializer, Consumer, Producer
from kheaders.broker import create_topic, find_or_start_broker
from kheaders.protect import (
    ProtectedDeserializer,
    ProtectedSerializer,
    RecordKeyDeserializer,
    RecordKeySerializer,
    StaticKeyring,
    public_key_of,
)

VALUE = os.urandom(1024)
HEADERS = [("traceparent", b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
           ("tenant", b"acme")]  # fmt: skip
AES = StaticKeyring({"k1": os.urandom(32)})
SEED = os.urandom(32)
SIGNING = StaticKeyring({"s1": SEED})
VERIFY = StaticKeyring({"s1": public_key_of(SEED)})
PRODUCER_CONFIG = {
    "queue.buffering.max.messages": 1_000_000,
    "queue.buffering.max.kbytes": 4_000_000,
    "linger.ms": 20,
}


def serializers(kind: str) -> dict[str, Any]:
    if kind == "plain":
        return {}
    if kind == "serialized":
        return {"key_serializer": BytesSerializer(), "value_serializer": BytesSerializer()}
    signing = SIGNING if kind == "encrypted+signed" else None
    return {
        "key_serializer": RecordKeySerializer(),
        "value_serializer": ProtectedSerializer(
            keyring=AES, signing_keyring=signing, bound_headers=["tenant"]
        ),
    }


def deserializers(kind: str) -> dict[str, Any]:
    if kind == "plain":
        return {}
    if kind == "serialized":
        return {"key_deserializer": BytesDeserializer(), "value_deserializer": BytesDeserializer()}
    verify = VERIFY if kind == "encrypted+signed" else None
    return {
        "key_deserializer": RecordKeyDeserializer(),
        "value_deserializer": ProtectedDeserializer(keyring=AES, verify_keyring=verify),
    }


def produce_round(bootstrap: str, topic: str, kind: str, n: int) -> tuple[float, float]:
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER_CONFIG}, **serializers(kind))
    produce = producer.produce
    start, cpu = time.perf_counter(), time.thread_time()
    for i in range(n):
        produce(topic, VALUE, b"key-%d" % (i & 1023), headers=HEADERS)
        if i & 4095 == 4095:
            producer.poll(0)
    assert producer.flush(120) == 0
    took = time.perf_counter() - start, time.thread_time() - cpu
    producer.close()
    return took


def consume_round(bootstrap: str, topic: str, kind: str, n: int) -> tuple[float, float]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex, "enable.auto.commit": False},
        **deserializers(kind),
    )
    start, cpu = time.perf_counter(), time.thread_time()
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = 0
    while got < n:
        for msg in consumer.consume(1000, 1.0):
            if msg.error() is None:
                assert len(msg.value()) == len(VALUE)
                got += 1
    took = time.perf_counter() - start, time.thread_time() - cpu
    consumer.close()
    return took


def best(
    rounds: int, kinds: list[str], run: Callable[[str], tuple[float, float]]
) -> dict[str, tuple[float, float]]:
    """The best wall-clock and the best CPU seconds (of the calling thread) of each kind."""
    out = dict.fromkeys(kinds, (float("inf"), float("inf")))
    for r in range(rounds):
        for kind in kinds[r % len(kinds) :] + kinds[: r % len(kinds)]:  # rotate the order
            wall, cpu = run(kind)
            out[kind] = (min(out[kind][0], wall), min(out[kind][1], cpu))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    broker = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        broker = find_or_start_broker()
        bootstrap = broker.bootstrap
    kinds = ["plain", "serialized", "encrypted", "encrypted+signed"]
    n = args.records
    try:
        topics = {
            k: create_topic(bootstrap, f"bench-protect-{uuid.uuid4().hex[:8]}") for k in kinds
        }
        produced = best(args.rounds, kinds, lambda k: produce_round(bootstrap, topics[k], k, n))
        consumed = best(args.rounds, kinds, lambda k: consume_round(bootstrap, topics[k], k, n))
    finally:
        if broker is not None:
            broker.stop()
    print(f"kheaders.protect, {n} records of {len(VALUE)} bytes, best of {args.rounds} rounds")
    for label, timing in (("produce", produced), ("consume", consumed)):
        for kind in kinds:
            wall, cpu = timing[kind]
            print(
                f"  {label:8} {kind:17} {n / wall:10,.0f} records/s"
                f"  {timing['serialized'][0] / wall:.2f}x serialized"
                f"  {timing['plain'][0] / wall:.2f}x plain"
                f"  | CPU {cpu / n * 1e6:6.1f} µs/record"
                f"  {timing['serialized'][1] / cpu:.2f}x serialized"
            )


if __name__ == "__main__":
    main()
