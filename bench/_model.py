"""The benchmark's data model: samples, contenders, groups and targets; the shared environment."""

from __future__ import annotations

import contextlib
import gc
import os
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal

from confluent_kafka import Consumer, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from kheaders.broker import create_topic


@dataclass
class Sample:
    """One timed run: ``count`` items (records, or bytes for codecs) in ``seconds``."""

    seconds: float
    count: int
    peak_rss_mb: float
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        """Items per second."""
        return self.count / self.seconds if self.seconds > 0 else 0.0


Run = Callable[[int], Sample]
"""A contender: given the item count, set up (untimed), run the timed section, tear down."""


@dataclass
class Contender:
    """A named way of doing the group's work; ``run`` is ``None`` when it cannot run here."""

    name: str
    run: Run | None
    note: str = ""


@dataclass
class Target:
    """``metric(contender) / metric(baseline) {op} threshold``, e.g. throughput >= 0.85x."""

    label: str
    contender: str
    baseline: str
    op: Literal[">=", "<="]
    threshold: float
    metric: Literal["rate", "peak_rss"] = "rate"


@dataclass
class Group:
    """Contenders doing the same work; ratios are taken to ``baseline``."""

    name: str
    title: str
    baseline: str
    contenders: list[Contender]
    targets: list[Target]
    count: int
    unit: Literal["records/s", "MB/s"] = "records/s"
    warmup: int = 0
    max_rounds: int | None = None
    close: Callable[[], None] | None = None


def median(values: list[float]) -> float:
    """The median (0.0 for no values)."""
    return statistics.median(values) if values else 0.0


class PeakRss:
    """Samples this process's resident set size every 10 ms; the peak growth over the start.

    A thread reading ``/proc/self/statm`` costs nothing measurable and the same for every
    contender; ``ru_maxrss`` cannot be used in-process because it never goes down.
    It also adds up the time the cyclic garbage collector ran inside the block and counts
    its full (generation 2) collections: per-record allocations show up there.
    """

    _PAGE = os.sysconf("SC_PAGE_SIZE")

    def __init__(self, interval: float = 0.01) -> None:
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self.start_bytes = 0
        self.peak_bytes = 0
        self.gc_seconds = 0.0
        self.gc_full = 0
        self._gc_started = 0.0

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        self.gc_seconds += time.perf_counter() - self._gc_started
        if info.get("generation") == 2:
            self.gc_full += 1

    @classmethod
    def current(cls) -> int:
        """Resident bytes now."""
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * cls._PAGE

    def _sample(self) -> None:
        while not self._stop.wait(self._interval):
            now = self.current()
            if now > self.peak_bytes:
                self.peak_bytes = now

    def __enter__(self) -> PeakRss:
        self.start_bytes = self.peak_bytes = self.current()
        self._thread.start()
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        gc.callbacks.remove(self._on_gc)
        self._stop.set()
        self._thread.join()
        self.peak_bytes = max(self.peak_bytes, self.current())

    @property
    def growth_mb(self) -> float:
        """Peak resident growth during the block, in MiB."""
        return (self.peak_bytes - self.start_bytes) / (1 << 20)

    def gc_extra(self, count: int) -> dict[str, float]:
        """GC figures for a sample of ``count`` items: µs per item, full collections."""
        return {"gc_us": self.gc_seconds / count * 1e6 if count else 0.0, "gc_full": self.gc_full}


class Env:
    """What every group needs: the broker, fresh topics, the shared client configuration."""

    def __init__(self, bootstrap: str, *, records: int, quick: bool) -> None:
        self.bootstrap = bootstrap
        self.records = records
        self.quick = quick
        self._admin: AdminClient | None = AdminClient({"bootstrap.servers": bootstrap})
        self._meta: Consumer | None = None

    def producer_config(self) -> dict[str, object]:
        """The one producer configuration every contender uses."""
        return {
            "bootstrap.servers": self.bootstrap,
            "client.id": "bench-client",
            "linger.ms": 5,
            "queue.buffering.max.messages": 2_000_000,
            "queue.buffering.max.kbytes": 2_097_151,
        }

    def consumer_config(self) -> dict[str, object]:
        """The one consumer configuration every contender uses (``assign()``, no commits)."""
        return {
            "bootstrap.servers": self.bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }

    def new_topic(self, prefix: str) -> str:
        """A fresh single-partition topic."""
        return create_topic(self.bootstrap, f"bench-{prefix}-{uuid.uuid4().hex[:10]}")

    def drop_topic(self, topic: str) -> None:
        """Delete ``topic`` so the in-memory broker does not keep every run's records."""
        if self._admin is None:
            return
        with contextlib.suppress(KafkaException, RuntimeError):  # best effort
            self._admin.delete_topics([topic], operation_timeout=10)[topic].result(timeout=10)

    def check_count(self, topic: str, n: int, timeout: float = 20.0) -> None:
        """Check that partition 0 of ``topic`` holds exactly ``n`` records (offsets 0..n-1).

        Reads only the tail: from one before the reported high watermark until offset
        ``n - 1`` shows up (the embedded Tansu broker reports the last batch's base offset + 1
        as the high watermark, so the watermark alone cannot be trusted). Raises RuntimeError.
        """
        if self._meta is None:
            self._meta = Consumer(self.consumer_config())
        _low, high = self._meta.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        if high > n:
            raise RuntimeError(f"{topic} has {high} records, expected {n}")
        tail = Consumer(self.consumer_config())
        try:
            tail.assign([TopicPartition(topic, 0, max(0, min(high, n) - 1))])
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                for msg in tail.consume(num_messages=10_000, timeout=0.5):
                    if msg.error() is not None:
                        continue
                    offset = msg.offset() or 0
                    if offset == n - 1:
                        return
                    if offset >= n:
                        raise RuntimeError(f"{topic} holds offset {offset}: more than {n} records")
        finally:
            tail.close()
        raise RuntimeError(f"{topic}: record {n - 1} never arrived (high watermark {high})")

    def close(self) -> None:
        """Close the clients this environment opened."""
        if self._meta is not None:
            self._meta.close()
            self._meta = None
        self._admin = None  # an AdminClient has no close(); dropping it stops its threads
