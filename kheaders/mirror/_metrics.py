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

Instruments are created once per MeterProvider and report every live mirror using it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation

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


class _Provider:
    """The instruments of one MeterProvider and the mirrors they report."""

    def __init__(self, provider: MeterProvider) -> None:
        self.provider = provider  # kept: its id is the registry key
        self.live: weakref.WeakSet[MirrorStats] = weakref.WeakSet()
        meter = provider.get_meter("kheaders.mirror")
        meter.create_observable_counter(
            RECORDS, [self._counts], unit="{record}", description="Records the mirror handled."
        )
        meter.create_observable_gauge(
            LAG, [self._lag], unit="{record}", description="Records not yet read by the mirror."
        )

    def _counts(self, _options: CallbackOptions) -> Iterator[Observation]:
        totals: dict[CountKey, int] = {}
        for stats in list(self.live):
            for key, n in dict(stats.counts).items():
                totals[key] = totals.get(key, 0) + n
        for (route, outcome, source, target), n in totals.items():
            yield Observation(
                n, {ROUTE: route, OUTCOME: outcome, SOURCE_TOPIC: source, DESTINATION: target}
            )

    def _lag(self, _options: CallbackOptions) -> Iterator[Observation]:
        for stats in list(self.live):
            for (topic, partition), lag in dict(stats.lag).items():
                yield Observation(lag, {DESTINATION: topic, PARTITION_ID: str(partition)})


_providers: dict[int, _Provider] = {}
_lock = threading.Lock()


def report(stats: MirrorStats, provider: MeterProvider | None = None) -> None:
    """Report ``stats`` through ``provider``'s instruments (``None``: the global provider's;
    made once per provider)."""
    use = metrics.get_meter_provider() if provider is None else provider
    with _lock:
        found = _providers.get(id(use))
        if found is None or found.provider is not use:
            found = _providers[id(use)] = _Provider(use)
        found.live.add(stats)
