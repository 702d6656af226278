"""Consume groups: kheaders.Consumer with trace extraction vs raw ``consume()``; peak memory.

A topic is filled once per group; each contender reads it from the start with ``assign()``
(no group join) in ``consume(num_messages=BATCH)`` batches.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import confluent_kafka

from bench._model import Contender, Env, Group, PeakRss, Sample, Target
from bench._produce import loop_fixed
from bench._readers import (
    Reader,
    open_consumer,
    prime,
    read_kheaders,
    read_kheaders_json,
    read_raw,
    read_raw_json_by_hand,
    read_raw_otel,
)
from bench._workload import workload

ROOT = Path(__file__).resolve().parent.parent


def fill(env: Env, topic: str, n: int) -> None:
    """Write ``n`` workload records to ``topic`` with a raw producer (untimed)."""
    producer = confluent_kafka.Producer(env.producer_config())
    w = workload(n)
    loop_fixed(producer.produce, producer.poll, topic, w)
    if producer.flush(120):
        raise RuntimeError(f"could not fill {topic}")
    env.check_count(topic, n)


def _kheaders_consumer_available() -> bool:
    try:
        from kheaders import Consumer  # noqa: F401
    except ImportError:
        return False
    return True


def _timed_read(env: Env, topic: str, kind: str, reader: Reader) -> Callable[[int], Sample]:
    """A contender: open a ``kind`` consumer (untimed), time ``reader`` over ``n - 1`` records."""

    def run(n: int) -> Sample:
        consumer = open_consumer(kind, env.consumer_config(), topic)
        prime(consumer)  # connection set up and first fetch answered: not timed
        gc.collect()
        with PeakRss() as mem:
            t0 = time.perf_counter()
            seen = reader(consumer, n - 1)
            seconds = time.perf_counter() - t0
        consumer.close()
        if seen < n - 1:
            raise RuntimeError(f"{kind}: {n - 1 - seen} of {n - 1} records lacked what was read")
        return Sample(seconds, n - 1, mem.growth_mb, mem.gc_extra(n - 1))

    return run


def consume_group(env: Env) -> Group:
    """Target 4a: kheaders.Consumer + trace-parent extraction >= 0.7x raw ``consume()``."""
    n_total = env.records
    topic = env.new_topic("consume")
    fill(env, topic, n_total)

    def make(kind: str, reader: Reader) -> Callable[[int], Sample]:
        return _timed_read(env, topic, kind, reader)

    ok = _kheaders_consumer_available()
    return Group(
        name="consume",
        title="Consume, read headers (+ trace parent)",
        baseline="confluent-kafka",
        contenders=[
            Contender("confluent-kafka", make("raw", read_raw)),
            Contender(
                "kheaders + extract",
                make("kheaders", read_kheaders) if ok else None,
                "" if ok else "unavailable: kheaders.Consumer is not in this checkout yet",
            ),
            Contender("confluent + otel extract", make("raw", read_raw_otel)),
        ],
        targets=[
            Target("4a. consume >= 0.85x raw", "kheaders + extract", "confluent-kafka", ">=", 0.85)
        ],
        count=n_total,
        warmup=max(n_total // 10, 2000),
        close=lambda: env.drop_topic(topic),
    )


def fill_json(env: Env, topic: str, n: int) -> None:
    """Write ``n`` records with JSON values (the payloads) and the workload's headers."""
    producer = confluent_kafka.Producer(env.producer_config())
    w = workload(n)
    encoded = {id(p): json.dumps(p).encode() for p in w.payloads}
    values = [encoded[id(p)] for p in w.payloads]
    loop_fixed(producer.produce, producer.poll, topic, replace(w, values=values))
    if producer.flush(120):
        raise RuntimeError(f"could not fill {topic}")
    env.check_count(topic, n)


def traced_consume_group(env: Env) -> Group:
    """Target 1, consume side: JsonDeserializer + strict trace extract vs the same by hand."""
    n_total = env.records
    topic = env.new_topic("consume-traced")
    fill_json(env, topic, n_total)
    ok = _kheaders_consumer_available()
    return Group(
        name="consume-traced",
        title="Consume JSON + extract the trace context",
        baseline="confluent by hand",
        contenders=[
            Contender("confluent bare", _timed_read(env, topic, "raw", read_raw)),
            Contender("confluent by hand", _timed_read(env, topic, "raw", read_raw_json_by_hand)),
            Contender(
                "kheaders json + extract",
                _timed_read(env, topic, "kheaders-json", read_kheaders_json) if ok else None,
                "" if ok else "unavailable: kheaders.Consumer is not in this checkout yet",
            ),
        ],
        targets=[],
        count=n_total,
        warmup=max(n_total // 10, 2000),
        close=lambda: env.drop_topic(topic),
    )


def memory_group(env: Env) -> Group:
    """Targets 4b, 4c: a whole process consuming 1M records, kheaders vs raw: rate and peak RSS."""
    n = min(env.records, 50_000) if env.quick else 1_000_000  # --records below that: smaller
    topic = env.new_topic("memory")
    fill(env, topic, n)

    def make(kind: str) -> Callable[[int], Sample]:
        def run(count: int) -> Sample:
            cmd = [
                sys.executable,
                "-m",
                "bench._memchild",
                "--bootstrap",
                env.bootstrap,
                "--topic",
                topic,
                "--count",
                str(count),
                "--kind",
                kind,
            ]
            pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
            done = subprocess.run(
                cmd,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": pythonpath},
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"memory child ({kind}) failed: {done.stderr[-2000:]}")
            out = json.loads(done.stdout.strip().splitlines()[-1])
            return Sample(
                out["seconds"],
                count,
                out["maxrss_kb"] / 1024,
                {"baseline_mb": out["baseline_kb"] / 1024},
            )

        return run

    ok = _kheaders_consumer_available()
    return Group(
        name="memory",
        title=f"Peak RSS consuming {n:,} records (own process)",
        baseline="confluent-kafka",
        contenders=[
            Contender("confluent-kafka", make("raw")),
            Contender(
                "kheaders + extract",
                make("kheaders") if ok else None,
                "" if ok else "unavailable: kheaders.Consumer is not in this checkout yet",
            ),
        ],
        targets=[
            Target(
                "4b. consume, 1M records >= 0.85x raw",
                "kheaders + extract",
                "confluent-kafka",
                ">=",
                0.85,
            ),
            Target(
                "4c. peak RSS <= 1.1x raw",
                "kheaders + extract",
                "confluent-kafka",
                "<=",
                1.1,
                metric="peak_rss",
            ),
        ],
        count=n,
        max_rounds=2 if env.quick else 3,
        close=lambda: env.drop_topic(topic),
    )
