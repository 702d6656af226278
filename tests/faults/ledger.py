"""Bookkeeping for fault tests: what was sent, acknowledged, failed and consumed, by digest."""

from __future__ import annotations

import hashlib
import random
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kheaders import Headers, ProducerRecord, RecordMetadata
from kheaders._model.headers import received


def record_digest(
    key: bytes | None, value: bytes | None, headers: Iterable[tuple[str, Any]] | object
) -> bytes:
    """A digest over key, value and headers byte for byte (order, duplicates and nulls count).

    ``headers``: a list of (key, value) pairs or None (confluent-kafka's type hints also allow
    a dict, which received records never carry: a TypeError here)."""
    if not isinstance(headers, Iterable | None) or isinstance(headers, dict):
        raise TypeError(f"headers are a list of pairs or None, not {type(headers).__name__}")
    h = hashlib.blake2b(digest_size=16)
    for part in (key, value):
        if part is None:
            h.update(b"\xff")
        else:
            h.update(len(part).to_bytes(4, "big"))
            h.update(part)
    h.update(received(list(headers or [])).to_bytes())
    return h.digest()


@dataclass
class Ledger:
    """Thread-safe record of every delivery report and every consumed record, by record id."""

    sent: dict[bytes, bytes] = field(default_factory=dict)  # id -> digest of what was sent
    acked: dict[bytes, bytes] = field(default_factory=dict)
    failed: dict[bytes, str] = field(default_factory=dict)
    reports: Counter[bytes] = field(default_factory=Counter)
    consumed: Counter[bytes] = field(default_factory=Counter)  # digest -> times seen
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def report(self, record_id: bytes, error: object | None) -> None:
        with self._lock:
            self.reports[record_id] += 1
            if error is None:
                self.acked[record_id] = self.sent[record_id]
            else:
                self.failed[record_id] = str(error)

    def consume(self, digest: bytes) -> None:
        with self._lock:
            self.consumed[digest] += 1

    def acked_consumed(self) -> int:
        with self._lock:
            return sum(1 for d in self.acked.values() if d in self.consumed)

    def summary(self) -> dict[str, int]:
        with self._lock:
            sent_digests = set(self.sent.values())
            failed_digests = {self.sent[i] for i in self.failed}
            return {
                "sent": len(self.sent),
                "acknowledged": len(self.acked),
                "reported_failed": len(self.failed),
                "consumed_distinct": len(self.consumed),
                "consumed_total": sum(self.consumed.values()),
                "consumed_redelivered": sum(n - 1 for n in self.consumed.values()),
                "failed_but_in_log": len(failed_digests & set(self.consumed)),
                "reported_twice": sum(1 for n in self.reports.values() if n > 1),
                "unknown_consumed": len(set(self.consumed) - sent_digests),
            }

    def failure_kinds(self) -> Counter[str]:
        with self._lock:
            return Counter(self.failed.values())

    def check(self) -> None:
        """Assert the no-loss contract; the message names how many records break it."""
        with self._lock:
            missing = [i for i, d in self.acked.items() if d not in self.consumed]
            unreported = set(self.sent) - set(self.reports)
            twice = [i for i, n in self.reports.items() if n > 1]
            both = set(self.acked) & set(self.failed)
            unknown = set(self.consumed) - set(self.sent.values())
        assert not missing, f"{len(missing)} acknowledged records never consumed: {missing[:5]}"
        assert not unreported, f"{len(unreported)} records got no delivery report"
        assert not twice, f"{len(twice)} records reported more than once: {twice[:5]}"
        assert not both, f"{len(both)} records reported both delivered and failed"
        assert not unknown, f"{len(unknown)} consumed records match nothing sent (corrupted?)"


def record_headers(i: int, rng: random.Random) -> list[tuple[str, bytes | None]]:
    """Record ``i``'s headers: its sequence number, random bytes, duplicates, a null, an empty
    value and a non-ASCII key (what a fault must not change or lose)."""
    return [
        ("seq", str(i).encode()),
        ("bin", rng.randbytes(rng.randrange(0, 24))),
        ("dup", b"1"),
        ("dup", b"2"),
        ("null", None),
        ("empty", b""),
        ("ключ", "значение".encode()),
    ]


class CountingLogger:
    """A structlog-like logger that counts events by name (100k records would flood a log)."""

    def __init__(self) -> None:
        self.events: Counter[str] = Counter()
        self.leaked = 0

    def bind(self, **_: object) -> CountingLogger:
        return self

    def _log(self, event: str, **fields: object) -> None:
        self.events[event] += 1

    info = debug = warning = error = _log


class AckLedger:
    """The last producer interceptor: digests what is really sent, and every acknowledgement."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.acks: Counter[bytes] = Counter()
        self.ack_errors: dict[bytes, str] = {}
        self.queue_full = 0  # produce() raised BufferError: the application sends it again
        self._lock = threading.Lock()

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        self.ledger.sent[record.key] = record_digest(record.key, record.value, record.headers)
        return record

    def on_acknowledgement(self, metadata: RecordMetadata, error: object, headers: Headers) -> None:
        seq = headers.last_value("seq")
        assert isinstance(seq, bytes)
        key = b"r%06d" % int(seq)
        if isinstance(error, BufferError):
            self.queue_full += 1
            return
        with self._lock:
            self.acks[key] += 1
            if error is not None:
                self.ack_errors[key] = str(error)
