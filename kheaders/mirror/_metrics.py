"""The mirror's counters and lag, kept as the metrics interceptors keep theirs.

Counts live in a plain dict (one add per record, no SDK call on the record path) and the
OpenTelemetry SDK reads the totals through asynchronous instruments when it collects:

- ``kheaders.mirror.records`` (counter, ``{record}``): ``kheaders.mirror.route`` (the rule's
  name, ``default``, or ``-`` for records no rule saw), ``kheaders.mirror.outcome``
  (``sent``, ``dropped``, ``looped``, ``dead_lettered``, ``retried``),
  ``kheaders.mirror.source.topic`` and ``messaging.destination.name`` (the target topic,
  ``-`` when none);
- ``kheaders.mirror.lag`` (gauge, ``{record}``): the source partition's high watermark minus
  the mirror's position, with ``messaging.destination.name`` (the source topic) and
  ``messaging.destination.partition.id``.

Instruments are created once per MeterProvider and report every live mirror.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

RECORDS = "kheaders.mirror.records"
LAG = "kheaders.mirror.lag"
ROUTE = "kheaders.mirror.route"
OUTCOME = "kheaders.mirror.outcome"
SOURCE_TOPIC = "kheaders.mirror.source.topic"
DESTINATION = "messaging.destination.name"
PARTITION_ID = "messaging.destination.partition.id"

SENT = "sent"
DROPPED = "dropped"
LOOPED = "looped"
DEAD_LETTERED = "dead_lettered"
RETRIED = "retried"
NO_ROUTE = "-"

CountKey = tuple[str, str, str, str]
"""(route, outcome, source topic, target topic or ``-``)."""


class MirrorStats:
    """Counts by route and outcome, and lag by source partition, of one mirror.

    Written by the mirror's thread only; read (copied) by a collecting thread.
    """

    __slots__ = ("__weakref__", "counts", "lag")

    def __init__(self) -> None:
        self.counts: dict[CountKey, int] = {}
        self.lag: dict[tuple[str, int], int] = {}

    def add(self, route: str, outcome: str, source: str, target: str = NO_ROUTE) -> None:
        """Count one record (or one copy of it)."""
        key = (route, outcome, source, target)
        counts = self.counts
        counts[key] = counts.get(key, 0) + 1

    def total(self, outcome: str, route: str | None = None) -> int:
        """The count of ``outcome`` (for ``route`` only when given)."""
        return sum(
            n
            for (r, o, _, _), n in dict(self.counts).items()
            if o == outcome and (route is None or r == route)
        )


_live: weakref.WeakSet[MirrorStats] = weakref.WeakSet()
_registered: set[int] = set()
_lock = threading.Lock()


def _observe_counts(_options: CallbackOptions) -> Iterator[Observation]:
    totals: dict[CountKey, int] = {}
    for stats in list(_live):
        for key, n in dict(stats.counts).items():
            totals[key] = totals.get(key, 0) + n
    for (route, outcome, source, target), n in totals.items():
        yield Observation(
            n, {ROUTE: route, OUTCOME: outcome, SOURCE_TOPIC: source, DESTINATION: target}
        )


def _observe_lag(_options: CallbackOptions) -> Iterator[Observation]:
    for stats in list(_live):
        for (topic, partition), lag in dict(stats.lag).items():
            yield Observation(lag, {DESTINATION: topic, PARTITION_ID: str(partition)})


def report(stats: MirrorStats) -> None:
    """Report ``stats`` through the global MeterProvider's instruments (made once)."""
    provider = metrics.get_meter_provider()
    with _lock:
        _live.add(stats)
        if id(provider) in _registered:
            return
        _registered.add(id(provider))
    meter = provider.get_meter("kheaders.mirror")
    meter.create_observable_counter(
        RECORDS, [_observe_counts], unit="{record}", description="Records the mirror handled."
    )
    meter.create_observable_gauge(
        LAG, [_observe_lag], unit="{record}", description="Records not yet read by the mirror."
    )
