"""Instructions per record (callgrind) of kheaders.aio's produce, against the sync Producer.

``python -m bench.aio_paths [--records N] [--against DIR]`` runs each contender in its own
interpreter under ``valgrind --tool=callgrind`` with ``N`` records and with none, and prints
the difference over ``N``, with the compiled core and with ``KHEADERS_NO_EXTENSIONS=1``
(``--against``: another checkout, e.g. ``git archive`` of main unpacked there, measured the
same way). librdkafka is replaced by a fake that queues records and serves their reports
(``poll``), so the count is the Python side, the collector included:

- ``aio produce``: ``await AIOProducer.produce(...)`` per record, the futures awaited in
  batches of 1,000 with at most 10,000 outstanding (``aio:produce``'s loop), reports served
  on the producer's delivery thread;
- ``aio send``: ``await AIOProducer.send(ProducerRecord(...))`` per record, one at a time
  (the lean path: nothing intercepts);
- ``sync + on_delivery``: ``Producer.produce(..., on_delivery=cb)`` per record, reports
  served every 1,000 records (the sync contender of ``aio:produce``).

Every record carries the workload's three headers (a list per record).
``python -m bench.aio_paths --child NAME N`` is one such run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONTENDERS = ("aio produce", "aio send", "sync + on_delivery")
WARMUP = 2000
BATCH = 1000
WINDOW = 10 * BATCH
LINGER = 0.002
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


class FakeRdkafka:
    """librdkafka's stand-in for a producer: queues records, ``poll`` serves their reports
    (from whichever thread polls; a poll with nothing to serve waits for a batch of records
    at most ``LINGER`` seconds, as librdkafka's ``linger.ms``)."""

    def __init__(self, config: object = None, **_: object) -> None:
        self.queue: deque[tuple[Any, str, Any, Any]] = deque()
        self.parked: deque[Any] = deque()
        self._ready = threading.Condition()

    def produce(self, topic: str, value: object = None, key: object = None,
                partition: int = -1, callback: Any = None, on_delivery: Any = None,
                timestamp: int = 0, headers: object = None) -> None:  # fmt: skip
        cb = callback or on_delivery
        if cb is not None:
            self.queue.append((cb, topic, key, value))
            if len(self.queue) == BATCH:  # a batch "delivered": wake the delivery thread
                with self._ready:
                    self._ready.notify()

    def poll(self, timeout: float = -1) -> int:
        import confluent_kafka

        queue = self.queue
        if not queue and timeout:
            with self._ready:
                self._ready.wait(LINGER if timeout < 0 else min(timeout, LINGER))
        served = 0
        make = confluent_kafka.Message
        while queue:
            cb, topic, key, value = queue.popleft()
            cb(None, make(topic=topic, partition=0, offset=served, key=key, value=value))
            served += 1
        return served

    def flush(self, timeout: float = -1) -> int:
        self.poll(0)
        return 0

    def unpark(self) -> None:
        pass

    def fail_parked(self) -> int:
        return 0

    def close(self, *_: object) -> None:
        pass

    def __len__(self) -> int:
        return len(self.queue)


def _headers(count: int) -> list[Any]:
    from bench._workload import workload

    return [list(h) for h in workload(max(count, 1)).headers[:count]]


def _aio(name: str, n: int) -> None:
    import kheaders.aio._producer as aio_producer
    from kheaders import ProducerRecord
    from kheaders.aio._parking import LoopProducer

    class FakeLoopProducer(LoopProducer):
        _client_class = FakeRdkafka  # type: ignore[assignment]

    aio_producer.LoopProducer = FakeLoopProducer  # type: ignore[attr-defined]  # its engine
    headers = _headers(WARMUP + n)
    value = b"v" * 100

    async def produce(producer: Any, lists: list[Any]) -> None:
        futures: deque[Any] = deque()
        for h in lists:
            futures.append(await producer.produce("bench", value, b"k", headers=h))
            if len(futures) >= WINDOW:
                for _ in range(BATCH):
                    await futures.popleft()
        for fut in futures:
            await fut

    async def send(producer: Any, lists: list[Any]) -> None:
        for h in lists:
            await producer.send(ProducerRecord("bench", value, b"k", h))

    run = produce if name == "aio produce" else send

    async def main() -> None:
        producer = aio_producer.AIOProducer({"bootstrap.servers": "127.0.0.1:9"})
        await run(producer, headers[:WARMUP])
        await run(producer, headers[WARMUP:])
        await producer.close()

    asyncio.run(main())


def _sync(n: int) -> None:
    from kheaders import Producer

    class FakeBacked(Producer):
        _client_class = FakeRdkafka  # type: ignore[assignment]

    producer = FakeBacked({"bootstrap.servers": "127.0.0.1:9"})
    headers = _headers(WARMUP + n)
    value = b"v" * 100
    delivered = [0]

    def on_delivery(err: object, _msg: object) -> None:
        if err is None:
            delivered[0] += 1

    def run(lists: list[Any]) -> None:
        for i, h in enumerate(lists):
            producer.produce("bench", value, b"k", headers=h, on_delivery=on_delivery)
            if i % BATCH == BATCH - 1:
                producer.poll(0)
        producer.flush()

    run(headers[:WARMUP])
    run(headers[WARMUP:])
    if delivered[0] != WARMUP + n:
        raise RuntimeError("records not reported")


def child(name: str, n: int) -> None:
    if name.startswith("aio"):
        _aio(name, n)
    elif name == "sync + on_delivery":
        _sync(n)
    else:
        raise SystemExit(f"unknown contender {name!r}")


def _count(name: str, n: int, root: Path, pure: bool) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    cmd += [str(Path(__file__).resolve()), "--child", name, str(n)]
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": f"{root}{os.pathsep}{ROOT}"}
    env.pop("KHEADERS_NO_EXTENSIONS", None)
    if pure:
        env["KHEADERS_NO_EXTENSIONS"] = "1"
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{name}: callgrind run failed: {done.stderr[-2000:]}")
    return int(found.group(1))


def measure(root: Path, records: int, names: tuple[str, ...], pure: bool) -> dict[str, float]:
    """Instructions per record of each contender with ``root``'s kheaders."""
    return {
        name: (_count(name, records, root, pure) - _count(name, 0, root, pure)) / records
        for name in names
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.aio_paths")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--only", default="", help="comma-separated contender names")
    parser.add_argument("--pure", action="store_true", help="the pure-Python core only")
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument("--child", nargs=2, metavar=("NAME", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    names = tuple(x for x in args.only.split(",") if x) or CONTENDERS
    columns: dict[str, dict[str, float]] = {}
    if not args.pure:
        columns["compiled"] = measure(ROOT, args.records, names, pure=False)
    columns["pure"] = measure(ROOT, args.records, names, pure=True)
    if args.against:
        if not args.pure:
            columns["against"] = measure(args.against, args.records, names, pure=False)
        columns["against pure"] = measure(args.against, args.records, names, pure=True)
    print(f"{'contender':<22}" + "".join(f"{c:>14}" for c in columns) + "   (instructions/record)")
    for name in names:
        print(f"{name:<22}" + "".join(f"{col[name]:>14,.0f}" for col in columns.values()))
    sync = "sync + on_delivery"
    if sync in names and "aio produce" in names:
        for label, col in columns.items():
            ratio = col[sync] / col["aio produce"]
            print(f"aio produce / sync + on_delivery ({label}): {ratio:.2f}x by instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
