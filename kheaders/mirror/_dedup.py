"""Deduplicator: drop records whose message id was seen lately (a consumer-side filter).

A mirror delivers at least once: after a crash it re-sends what was in flight, and those
copies carry the same ``kheaders.message.id`` as the first ones. The window is bounded both
by count (``max_ids``) and by time (``window_seconds``): a duplicate arriving after its id
left the window is let through, so size the window above the longest redelivery you expect
(a mirror's ``max_in_flight``, and its restart time).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from kheaders._errors import ConfigurationError
from kheaders._model.received import message_headers
from kheaders.mirror._ids import MESSAGE_ID


class Deduplicator:
    """Admits a record the first time its message id is seen within the window.

    Records without the id header are always admitted (counted in ``without_id``).

    >>> dedup = Deduplicator(max_ids=2)
    >>> [dedup.admit_headers([("kheaders.message.id", i)]) for i in (b"a", b"b", b"a")]
    [True, True, False]

    Raises ConfigurationError for a window below one id or one second's fraction.
    """

    __slots__ = ("_clock", "_seen", "duplicates", "header", "max_ids", "window", "without_id")

    def __init__(
        self,
        *,
        max_ids: int = 100_000,
        window_seconds: float = 3600.0,
        header: str = MESSAGE_ID,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_ids < 1 or window_seconds <= 0:
            raise ConfigurationError("max_ids >= 1 and window_seconds > 0, please")
        self.max_ids = max_ids
        self.window = window_seconds
        self.header = header
        self._clock = clock
        self._seen: OrderedDict[bytes, float] = OrderedDict()
        self.duplicates = 0
        """Records dropped so far."""
        self.without_id = 0
        """Records admitted because they carry no message id."""

    def __len__(self) -> int:
        return len(self._seen)

    def admit_headers(self, headers: Iterable[tuple[str, bytes | None]] | None) -> bool:
        """True the first time the (last) message id in ``headers`` is seen in the window."""
        found: bytes | None = None
        for key, value in headers or ():
            if key == self.header:
                found = value
        if found is None:
            self.without_id += 1
            return True
        now = self._clock()
        seen = self._seen
        horizon = now - self.window
        while seen and next(iter(seen.values())) < horizon:
            seen.popitem(last=False)
        if found in seen:
            self.duplicates += 1
            return False
        seen[found] = now
        if len(seen) > self.max_ids:
            seen.popitem(last=False)
        return True

    def admit(self, message: Any) -> bool:
        """As :meth:`admit_headers` for a consumed message (confluent or kheaders).

        Raises DeserializationError for a record whose headers cannot be read.
        """
        headers = message_headers(message)
        return self.admit_headers(headers)

    def filter(self, messages: Iterable[Any]) -> list[Any]:
        """The messages to keep, in order (duplicates within the window left out)."""
        return [m for m in messages if self.admit(m)]
