"""What bench.processing, bench.share and bench.exactly_once share: their arguments, the
broker, the rounds that alternate the contenders, and the table of medians and ratios.

Each contender is a callable returning ``(records per wall second, records per CPU second of
the handling thread)``; :class:`Clock` measures both from the first record handled to the
last (group joins left out).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence

import confluent_kafka

from kheaders.broker import create_topic

HEADERS: list[tuple[str, str | bytes | None]] = [
    ("trace", b"0123456789abcdef"),
    ("client", b"svc-a"),
    ("ver", b"\x00\x00\x00\x01"),
]
VALUE = b"v" * 100

Contender = Callable[[], tuple[float, float]]


def arguments(
    doc: str | None, records: int, *, batch_size: int | None = None, icount: str | None = None
) -> argparse.Namespace:
    """``--records`` (default ``records``), ``--rounds``, ``--bootstrap``; ``--batch-size``
    when ``batch_size`` is given, ``--icount N`` (described by ``icount``) when that is;
    ``doc``'s first line describes the program."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("--records", type=int, default=records)
    parser.add_argument("--rounds", type=int, default=3)
    if batch_size is not None:
        parser.add_argument("--batch-size", type=int, default=batch_size)
    if icount is not None:
        parser.add_argument("--icount", type=int, metavar="N", default=None, help=icount)
    parser.add_argument(
        "--bootstrap", default=None, help="a broker to use (default: one started for the run)"
    )
    return parser.parse_args()


@contextlib.contextmanager
def broker(bootstrap: str | None, *, apache: bool) -> Iterator[str]:
    """``bootstrap``, else a broker started for the run and stopped after it: Apache Kafka
    when ``apache`` (share groups, transactions), else the usual one."""
    if bootstrap is not None:
        yield bootstrap
        return
    from kheaders.broker import ApacheKafka, find_or_start_broker

    stop: Callable[..., object]
    if apache:
        kafka = ApacheKafka().start(120)
        stop, address = kafka.stop, kafka.bootstrap
    else:
        found = find_or_start_broker(allow_docker=False)
        stop, address = found.stop, found.bootstrap
    try:
        yield address
    finally:
        stop()


class Clock:
    """Counts handled records; notes the first and the last one's time; ``done`` at ``n``."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.count = 0
        self.first = self.last = 0.0
        self.cpu_first = self.cpu_last = 0.0
        self.done = threading.Event()

    def tick(self) -> None:
        if not self.count:
            self.first = time.perf_counter()
            self.cpu_first = time.thread_time()
        self.count += 1
        if self.count == self.n:
            self.last = time.perf_counter()
            self.cpu_last = time.thread_time()
            self.done.set()

    def rate(self) -> tuple[float, float]:
        """Records per wall second, and per CPU second of the handling thread."""
        return (
            (self.n - 1) / (self.last - self.first),
            (self.n - 1) / max(self.cpu_last - self.cpu_first, 1e-9),
        )


def fill(bootstrap: str, n: int) -> str:
    """A fresh one-partition topic holding ``n`` records (3 headers, 100-byte values)."""
    topic = create_topic(bootstrap, f"bench-processing-{uuid.uuid4().hex[:8]}", partitions=1)
    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 50})
    for i in range(n):
        while True:
            try:
                p.produce(topic, VALUE, str(i % 1000).encode(), headers=HEADERS)
                break
            except BufferError:
                p.poll(0.05)
    p.flush(120)
    return topic


def contest(
    contenders: dict[str, Contender],
    rounds: int,
    heading: str,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> None:
    """Run every contender ``rounds`` times, each round starting one further along; print
    ``heading``, the median rates and the ratios of ``pairs`` (default: each contender to
    the first)."""
    names = list(contenders)
    walls: dict[str, list[float]] = {name: [] for name in names}
    cpus: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            wall, cpu = contenders[name]()
            walls[name].append(wall)
            cpus[name].append(cpu)
    wall_m = {k: statistics.median(v) for k, v in walls.items()}
    cpu_m = {k: statistics.median(v) for k, v in cpus.items()}
    print(heading)
    print("records/s per wall second, and per CPU second of the handling thread (medians)")
    width = max(30, *map(len, names))
    for name in names:
        print(f"  {name:{width}s} wall {wall_m[name]:>10,.0f}  cpu {cpu_m[name]:>10,.0f}")
    for mine, peer in pairs if pairs is not None else [(n, names[0]) for n in names[1:]]:
        print(
            f"  {mine} / {peer}: wall {wall_m[mine] / wall_m[peer]:.2f}x,"
            f" cpu {cpu_m[mine] / cpu_m[peer]:.2f}x"
        )
