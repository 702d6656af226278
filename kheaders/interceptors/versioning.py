"""Stamp each produced record with a KIP-280 version header.

:class:`VersionStampInterceptor` sets the version header (replacing any existing one) from a
function of the record, or by default from a hybrid logical clock, so a topic read with the
``header`` compaction strategy keeps the latest version even when records arrive out of order.

Hybrid logical clock layout (a signed 64-bit long, always positive)::

    bit 63      0
    bits 62..16 wall-clock milliseconds since the Unix epoch (47 bits: until the year 6429)
    bits 15..0  logical counter (65 536 stamps per millisecond before borrowing the next ms)

Each stamp is ``max(now_ms << 16, previous + 1)``: strictly increasing for this interceptor
(so for every key it stamps), even when the wall clock steps back. One clock serves all keys:
that is monotonic per key as required, keeps no per-key memory, and only borrows from the
next millisecond beyond 65 536 stamps in one; :meth:`HybridClock.observe`
moves it past a version seen elsewhere (e.g. read from the state) so the next stamp beats it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from kheaders import ConfigurationError, ProducerRecord
from kheaders.compaction import (
    ENCODING_CONFIG,
    HEADER_CONFIG,
    CompactionRules,
    Encoding,
    encode_version,
)

_LOGICAL_BITS = 16
_MAX_STAMP = (1 << 63) - 1


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class HybridClock:
    """A thread-safe hybrid logical clock: ``physical ms << 16 | logical``, never going back.

    >>> clock = HybridClock(lambda: 1000)
    >>> a, b = clock.now(), clock.now()
    >>> (a >> 16, a & 0xFFFF, b - a)
    (1000, 0, 1)
    """

    __slots__ = ("_last", "_lock", "_wall")

    def __init__(self, wall_ms: Callable[[], int] = _wall_ms) -> None:
        self._wall = wall_ms
        self._last = 0
        self._lock = threading.Lock()

    def now(self) -> int:
        """The next stamp: above every stamp given (or observed) before."""
        physical = self._wall() << _LOGICAL_BITS
        with self._lock:
            stamp = physical if physical > self._last else self._last + 1
            if stamp > _MAX_STAMP:
                raise ValueError("hybrid clock exhausted the signed 64-bit range")
            self._last = stamp
        return stamp

    def observe(self, version: int) -> None:
        """Make every later stamp greater than ``version`` (a version seen elsewhere)."""
        with self._lock:
            self._last = max(self._last, version)

    @staticmethod
    def physical_ms(stamp: int) -> int:
        """The wall-clock millisecond part of a stamp."""
        return stamp >> _LOGICAL_BITS

    @staticmethod
    def logical(stamp: int) -> int:
        """The logical counter part of a stamp."""
        return stamp & ((1 << _LOGICAL_BITS) - 1)


class VersionStampInterceptor:
    """Producer interceptor: set header ``header`` to the record's version, ``encoding``-encoded.

    ``version_of(record) -> int`` supplies versions (e.g. an aggregate's sequence number);
    without it a :class:`HybridClock` stamps them.  Any existing ``header`` is replaced.

    >>> stamp = VersionStampInterceptor(version_of=lambda r: r.value["seq"])
    >>> rec = stamp.on_send(ProducerRecord("t", {"seq": 7}, headers=[("version", b"old")]))
    >>> rec.headers.last_value("version").hex()
    '0000000000000007'

    Raises ConfigurationError for a blank header or an unknown encoding; ``on_send`` raises
    ValueError for a version outside the signed 64-bit range (the chain logs and skips it).
    """

    config_keys = CompactionRules.config_keys
    """KIP-280's settings (``compaction.strategy*``): one config names this interceptor and
    them; kheaders keeps them from librdkafka."""

    def __init__(
        self,
        header: str = "version",
        encoding: Encoding | str = "long",
        version_of: Callable[[ProducerRecord], int] | None = None,
        clock: HybridClock | None = None,
    ) -> None:
        self.header = header
        self.encoding: Encoding = "long"
        self._set(header, encoding)
        self.version_of = version_of
        self.clock = clock if clock is not None else HybridClock()

    def _set(self, header: object, encoding: object) -> None:
        if not isinstance(header, str) or not header.strip():
            raise ConfigurationError(
                f"{HEADER_CONFIG}: the version header key must be a non-blank string,"
                f" got {header!r}"
            )
        if encoding not in ("long", "varlong"):
            raise ConfigurationError(
                f"{ENCODING_CONFIG}: unknown version encoding {encoding!r}; use long or varlong"
            )
        self.header = header
        self.encoding = "long" if encoding == "long" else "varlong"

    def configure(self, config: Mapping[str, object]) -> None:
        """Take ``compaction.strategy.header`` and ``compaction.strategy.header.encoding``
        from a client config when present.

        Raises ConfigurationError naming the setting at fault.
        """
        header = config.get(HEADER_CONFIG, self.header)
        encoding = config.get(ENCODING_CONFIG, self.encoding)
        if isinstance(encoding, str):
            encoding = encoding.strip().lower() or "long"
        self._set(header, encoding)

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        """Set the version header on ``record`` (replacing any) and return it."""
        version = self.clock.now() if self.version_of is None else self.version_of(record)
        record.headers.set(self.header, encode_version(version, self.encoding))
        return record
