"""Instructions per record (callgrind) of the consume side, compiled core against pure Python.

``python -m bench.compiled [--records N]`` counts, for each contender, the instructions of
``N`` records minus those of none (same setup and warm-up, each in its own interpreter under
``valgrind --tool=callgrind``), divided by ``N``, once with the compiled core and once with
``KHEADERS_NO_EXTENSIONS=1``:

- ``consume raw``: ``confluent_kafka.Consumer.consume()`` reading ``msg.headers()`` (the
  ``consume`` group's baseline loop, ``bench._readers.read_raw``);
- ``consume kheaders``: ``kheaders.wrap_consumer`` + ``extract_trace_parent(msg.headers())``
  per record (the group's kheaders loop, ``bench._readers.read_kheaders``);
- ``parse traceparent``: ``parse_traceparent`` of the workload's values (1,024 distinct
  55-byte values cycled, more than the pure-Python core's cache holds; the compiled core
  keeps none).

librdkafka is replaced by a fake consumer whose ``consume()`` hands out batches of real
``confluent_kafka.Message`` objects built before the clock (the workload's 3 headers each),
so only the Python side is counted, identically for every contender.
``python -m bench.compiled --child NAME N SIZE`` is one such run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONTENDERS = ("consume raw", "consume kheaders", "parse traceparent")
WARMUP = 2000
_COLLECTED = re.compile(r"Collected : (\d+)")


class FakeConsumer:
    """Stands in for ``confluent_kafka.Consumer``: ``consume()`` hands out prepared records.

    It keeps no record it handed out (as librdkafka does not), so a record lives as long as
    its reader keeps it: the garbage collector sees what it sees in a real consumer.
    """

    def __init__(self, messages: list[Any]) -> None:
        self._messages = messages
        self._at = 0

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]:
        start = self._at
        batch = self._messages[start : start + num_messages]
        self._messages[start : start + len(batch)] = [None] * len(batch)
        self._at = start + len(batch)
        return batch

    def close(self) -> None:
        pass


def _messages(count: int) -> list[Any]:
    import confluent_kafka

    from bench._workload import workload

    w = workload(max(count, 1))
    make = confluent_kafka.Message
    rows = zip(w.keys[:count], w.values[:count], w.headers[:count], strict=True)
    return [
        make(topic="bench", partition=0, offset=i, key=k, value=v, headers=list(h))
        for i, (k, v, h) in enumerate(rows)
    ]


def build(name: str, size: int) -> Callable[[int], object]:
    """``run(n)`` for ``name``, over inputs for ``WARMUP + size`` records made now."""
    from bench._readers import read_kheaders, read_raw

    if name == "parse traceparent":
        from bench._workload import workload
        from kheaders.tracecontext import parse_traceparent

        values = [h[0][1] for h in workload(WARMUP + size).headers]
        state = {"at": 0}

        def parse(n: int) -> object:
            at = state["at"]
            state["at"] = at + n
            return [parse_traceparent(v) for v in values[at : at + n]]

        return parse
    fake = FakeConsumer(_messages(WARMUP + size))
    if name == "consume raw":
        return lambda n: read_raw(fake, n)
    if name == "consume kheaders":
        import kheaders

        consumer = kheaders.wrap_consumer(fake)  # type: ignore[arg-type]
        return lambda n: read_kheaders(consumer, n)
    raise SystemExit(f"unknown contender {name!r}")


def child(name: str, n: int, size: int) -> int:
    """Warm up, then run ``n`` records."""
    run = build(name, size)
    run(WARMUP)
    run(n)
    return 0


def _count(name: str, n: int, size: int, pure: bool) -> int:
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    cmd += ["-m", "bench.compiled", "--child", name, str(n), str(size)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("KHEADERS_NO_EXTENSIONS", None)
    if pure:
        env["KHEADERS_NO_EXTENSIONS"] = "1"
    done = subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600, check=False
    )
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{name}: callgrind run failed: {done.stderr[-2000:]}")
    return int(found.group(1))


def measure(records: int, names: tuple[str, ...], pure: bool) -> dict[str, float]:
    """Instructions per record of each contender (``N`` records minus none, over ``N``)."""
    return {
        name: (_count(name, records, records, pure) - _count(name, 0, records, pure)) / records
        for name in names
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compiled")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--only", default="", help="comma-separated contender names")
    parser.add_argument("--child", nargs=3, metavar=("NAME", "N", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        name, n, size = args.child
        return child(name, int(n), int(size))
    import kheaders

    names = tuple(x for x in args.only.split(",") if x) or CONTENDERS
    compiled = measure(args.records, names, pure=False) if kheaders.COMPILED else {}
    pure = measure(args.records, names, pure=True)
    print(f"{'contender':<20} {'compiled':>10} {'pure':>10}   (instructions/record)")
    for name in names:
        c = f"{compiled[name]:,.0f}" if name in compiled else "-"
        print(f"{name:<20} {c:>10} {pure[name]:>10,.0f}")
    raw = "consume raw"
    if raw in names and "consume kheaders" in names:
        for label, counts in (("compiled", compiled), ("pure", pure)):
            if counts:
                ratio = counts[raw] / counts["consume kheaders"]
                print(f"consume kheaders / raw ({label}): {ratio:.2f}x raw's speed by instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
