"""Instructions per record (callgrind) of each produce path, for two checkouts side by side.

``python -m bench.produce_paths [--records N] [--against DIR]`` runs each contender in its own
interpreter under ``valgrind --tool=callgrind`` with ``N`` records and with none, and prints
the difference over ``N``: the Python side of ``Producer.produce`` on each path (librdkafka is
replaced by a fake that queues records and serves their reports, as in
``bench._icount_child``), stable where wall-clock ratios on a busy machine are not.
``--against DIR`` (e.g. ``git archive`` of an earlier commit unpacked there) measures that
checkout's kheaders the same way and prints the ratio.

The child is this file run as a script (``--child``), so it imports the kheaders of the
checkout on its ``PYTHONPATH``, not this one's.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONTENDERS = (
    "plain, no headers",
    "plain, one list reused",
    "plain, a list per record",
    "plain + on_delivery, one list",
    "plain + on_delivery, no headers",
    "acknowledging, one list",
    "intercepted, one list",
    "carried (kheaders.aio's), one list",
    "carried (kheaders.aio's), no headers",
    "raw confluent, one list",
    "raw confluent + on_delivery, one list",
    "raw confluent + on_delivery, no headers",
)
"""The ``raw confluent`` contenders call the fake's ``produce`` directly (the same callback,
shown ``msg.headers()`` as confluent gives it): the baseline each kheaders path adds to."""
WARMUP = 500
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def _child(name: str, n: int) -> None:
    import confluent_kafka

    from kheaders import Producer

    class Fake:
        """librdkafka's stand-in: queues records with a report, ``poll`` serves them."""

        def __init__(self, config: object = None, **_: object) -> None:
            self.queue: list[tuple[Any, str, object]] = []

        def produce(self, topic: str, value: object = None, key: object = None,
                    partition: int = -1, callback: Any = None, on_delivery: Any = None,
                    timestamp: int = 0, headers: object = None) -> None:  # fmt: skip
            cb = callback or on_delivery
            if cb is not None:
                self.queue.append((cb, topic, value))

        def poll(self, timeout: float = -1) -> int:
            queue, self.queue = self.queue, []
            for cb, topic, value in queue:
                cb(None, confluent_kafka.Message(topic=topic, partition=0, offset=0, value=value))
            return len(queue)

        def flush(self, timeout: float = -1) -> int:
            self.poll()
            return 0

        def __len__(self) -> int:
            return len(self.queue)

    class Acks:
        def on_acknowledgement(self, metadata: object, error: object, headers: object) -> None:
            pass

    class Sends(Acks):
        def on_send(self, record: Any) -> Any:
            return record

    class FakeBacked(Producer):
        _client_class = Fake  # type: ignore[assignment]

    interceptors: list[object] = []
    if name.startswith("acknowledging"):
        interceptors = [Acks()]
    elif name.startswith("intercepted"):
        interceptors = [Sends()]
    producer: Any = FakeBacked({"bootstrap.servers": "127.0.0.1:9"}, interceptors=interceptors)
    if name.startswith("raw confluent"):
        producer = Fake()
    reused = [("content-type", b"application/json"), ("client-id", b"bench")]
    lists = [[("content-type", b"application/json"), ("n", b"%d" % i)] for i in range(1024)]
    seen = []

    def on_delivery(err: object, msg: Any) -> None:
        seen.append(msg.headers())
        seen.clear()

    callback = on_delivery if "on_delivery" in name else None
    no_headers = "no headers" in name
    per_record = "per record" in name
    produce = producer.produce
    if name.startswith("carried"):
        import kheaders._client.producer as producer_module

        carry = getattr(producer, "_produce_carried", None)  # before the paths
        if hasattr(producer_module, "sender_of"):  # one sender: the carrier is the report
            send = producer_module.sender_of(producer).send

            def carry(report: Any, topic: str, value: Any, key: Any, *args: Any) -> None:
                partition, timestamp, headers = args
                send(topic, value, key, headers, report, partition=partition, timestamp=timestamp)
        elif carry is None:
            carry = producer_module.path_of(producer).carry

        class Carrier:
            """A future's stand-in: the record's only report, carrying its headers."""

            __slots__ = ("sent",)

            def __call__(self, err: object, msg: Any) -> None:
                seen.append(self.sent)
                seen.clear()

        def produce(topic: str, value: bytes, key: bytes, **kw: Any) -> None:
            carry(Carrier(), topic, value, key, -1, 0, kw["headers"])

    def run(count: int) -> None:
        for i in range(count):
            headers = None if no_headers else lists[i % 1024] if per_record else reused
            produce("bench", b"v" * 100, b"k", on_delivery=callback, headers=headers)
            if i % 100 == 99:
                producer.poll(0)
        producer.flush()

    run(WARMUP)
    run(n)


def _count(name: str, n: int, root: Path) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    cmd += [str(Path(__file__).resolve()), "--child", name, str(n)]
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(root)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{name}: callgrind run failed: {done.stderr[-2000:]}")
    return int(found.group(1))


def measure(root: Path, records: int, names: tuple[str, ...] = CONTENDERS) -> dict[str, float]:
    """Instructions per record of each contender (``names``) with ``root``'s kheaders."""
    return {name: (_count(name, records, root) - _count(name, 0, root)) / records for name in names}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument(
        "--only", action="append", help="a contender's name (repeatable; default: all)"
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return 0
    names = tuple(args.only) if args.only else CONTENDERS
    unknown = set(names) - set(CONTENDERS)
    if unknown:
        parser.error(f"unknown contenders: {', '.join(sorted(unknown))}")
    now = measure(ROOT, args.records, names)
    before = measure(args.against, args.records, names) if args.against else None
    print(
        f"{'contender':40} {'instructions/record':>20}" + ("   against   ratio" if before else "")
    )
    for name, count in now.items():
        line = f"{name:40} {count:>20,.0f}"
        if before:
            line += f"   {before[name]:>7,.0f}   {count / before[name]:.2f}x"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
