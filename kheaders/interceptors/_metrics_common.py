"""What the metrics interceptors share: instrument names, the per-provider instruments, sampling.

Why counts are kept here and observed, not added per record: an SDK ``Counter.add`` or
``Histogram.record`` cleans and hashes its attributes and takes a lock on every call, more
than producing the record costs (bench/README.md). So the interceptors count in plain dicts
and the SDK reads the totals through asynchronous counters when it collects (the exported
data is the same monotonic cumulative sum a synchronous counter gives), and durations are
recorded for every record up to a per-second budget per client, for an evenly spread sample
of the rest above it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Histogram, Meter, MeterProvider, Observation

from kheaders.interceptors._config import Config, get_str
from kheaders.interceptors._tracing_common import (
    INSTRUMENTATION_NAME,
    INSTRUMENTATION_VERSION,
    SCHEMA_URL,
)

# OpenTelemetry messaging semantic conventions (semconv 0.66b1 / 1.3x names).
SENT_MESSAGES = "messaging.client.sent.messages"
CONSUMED_MESSAGES = "messaging.client.consumed.messages"
OPERATION_DURATION = "messaging.client.operation.duration"
PROCESS_DURATION = "messaging.process.duration"

DURATION_BUCKETS: tuple[float, ...] = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
)
"""Seconds: the conventions' advice (5 ms to 10 s) plus 1 and 2.5 ms for a local broker."""

MAX_RATE_KEY = "kheaders.metrics.duration.max.per.second"
MAX_PENDING_KEY = "kheaders.metrics.max.pending"
CONFIG_KEYS = (MAX_RATE_KEY, MAX_PENDING_KEY)
"""The metrics settings; both metrics interceptors declare them, so one config can serve a
producer and a consumer."""
DEFAULT_MAX_RATE = 100

AttrValue = str | int
Attrs = dict[str, AttrValue]
AttrKey = tuple[tuple[str, AttrValue], ...]
"""Attributes as a hashable, sorted tuple of pairs (one time series)."""


def error_type(error: object) -> str:
    """``error.type``: a KafkaError's name (``_MSG_TIMED_OUT``), else the exception's class."""
    name = getattr(error, "name", None)
    if callable(name):
        return str(name())
    return type(error).__qualname__


def group_of(config: Config) -> str | None:
    """The consumer group (``group.id``) of a client config."""
    return get_str(config, "group.id")


def is_noop(provider: MeterProvider | None) -> bool:
    """True when ``provider`` (``None``: the global one) is the API's own no-op or proxy.

    The API package defines only those two; any other provider is an SDK (or a third-party
    implementation) that records. Set the MeterProvider before building clients.
    """
    use = metrics.get_meter_provider() if provider is None else provider
    return type(use).__module__.startswith("opentelemetry.metrics")


def freeze(attrs: Attrs) -> AttrKey:
    """``attrs`` as a hashable key."""
    return tuple(sorted(attrs.items()))


class SeriesCounts:
    """Cumulative counts by a raw key (cheap to build per record), safe to add to from several
    threads; reported under the attributes ``attributes(raw)`` gives (cached per raw key)."""

    __slots__ = ("_attributes", "_counts", "_keys", "_lock")

    def __init__(self, attributes: Callable[[Any], Attrs]) -> None:
        self._attributes = attributes
        self._counts: dict[Any, int] = {}
        self._keys: dict[Any, AttrKey] = {}
        self._lock = threading.Lock()

    def add(self, raw: object) -> None:
        """Add one to the count of ``raw``."""
        with self._lock:
            counts = self._counts
            counts[raw] = counts.get(raw, 0) + 1

    def add_all(self, added: dict[Any, int]) -> None:
        """Add several counts at once (one lock for a whole batch)."""
        with self._lock:
            counts = self._counts
            for raw, n in added.items():
                counts[raw] = counts.get(raw, 0) + n

    def reset_attributes(self) -> None:
        """Forget the cached attributes (the client's settings changed)."""
        self._keys = {}

    def counts(self) -> list[tuple[AttrKey, int]]:
        """A snapshot: every series' attributes and total."""
        with self._lock:
            items = list(self._counts.items())
        out = []
        for raw, n in items:
            key = self._keys.get(raw)
            if key is None:
                key = self._keys[raw] = freeze(self._attributes(raw))
            out.append((key, n))
        return out


class CountSource(Protocol):
    """Cumulative counts an asynchronous counter observes (a :class:`SeriesCounts`)."""

    def counts(self) -> Iterable[tuple[AttrKey, int]]: ...


class Sampler:
    """Allows at most ``limit`` durations per one-second window, spread evenly.

    In a window, every ``stride``-th call is taken until ``limit`` are taken; the stride for
    the next window comes from this window's call count. ``limit=0`` takes every call. Below
    the limit every call is taken, so small runs (tests, quiet services) are exact.
    """

    __slots__ = ("_calls", "_clock", "_end", "_limit", "_stride", "_taken")

    def __init__(self, limit: int, clock: Callable[[], float] = time.perf_counter) -> None:
        self._limit = limit
        self._clock = clock
        self._stride = 1
        self._calls = 0
        self._taken = 0
        self._end = 0.0

    def take(self) -> float | None:
        """The clock's time now if this call's duration is to be recorded, else ``None``."""
        now = self._clock()
        if not self._limit:
            return now
        if now >= self._end:
            calls = self._calls
            self._stride = max(1, -(-calls // self._limit))
            self._calls = self._taken = 0
            self._end = now + 1.0
        self._calls += 1
        if self._taken >= self._limit or self._calls % self._stride:
            return None
        self._taken += 1
        return now


class CountSources:
    """The count sources of one counter: live ones, and the totals of retired ones.

    A closed client's counts stay in the totals (a cumulative counter never goes back), and
    the source itself is dropped, so clients built and closed over and over cost one series
    each, not one object each.
    """

    def __init__(self) -> None:
        self._live: dict[int, CountSource] = {}
        self._retired: dict[AttrKey, int] = {}
        self._lock = threading.Lock()

    def add(self, source: CountSource) -> None:
        """Report ``source``'s counts from now on."""
        with self._lock:
            self._live[id(source)] = source

    def retire(self, source: CountSource) -> None:
        """Keep ``source``'s counts as they are now and stop asking it."""
        with self._lock:
            if self._live.pop(id(source), None) is None:
                return
            for key, n in source.counts():
                self._retired[key] = self._retired.get(key, 0) + n

    def totals(self) -> dict[AttrKey, int]:
        """Every series' total over live and retired sources (equal attributes summed)."""
        with self._lock:
            totals = dict(self._retired)
            live = list(self._live.values())
        for source in live:
            for key, n in source.counts():
                totals[key] = totals.get(key, 0) + n
        return totals


class Instruments:
    """The messaging instruments of one MeterProvider, created once and shared by its clients.

    Two clients with the same attributes (two producers writing one topic) report one series:
    the asynchronous counters sum every live interceptor's counts by attributes.
    """

    def __init__(self, meter: Meter) -> None:
        self._producers = CountSources()
        self._consumers = CountSources()
        self.sent = meter.create_observable_counter(
            SENT_MESSAGES,
            callbacks=[self._observer(self._producers)],
            unit="{message}",
            description="Number of messages producer attempted to send to the broker.",
        )
        self.consumed = meter.create_observable_counter(
            CONSUMED_MESSAGES,
            callbacks=[self._observer(self._consumers)],
            unit="{message}",
            description="Number of messages that were delivered to the application.",
        )
        self.operation_duration: Histogram = meter.create_histogram(
            OPERATION_DURATION,
            unit="s",
            description="Duration of messaging operation initiated by a producer or consumer"
            " client.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        self.process_duration: Histogram = meter.create_histogram(
            PROCESS_DURATION,
            unit="s",
            description="Duration of processing operation.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )

    @staticmethod
    def _observer(sources: CountSources) -> Callable[[CallbackOptions], Iterator[Observation]]:
        def observe(_options: CallbackOptions) -> Iterator[Observation]:
            for key, n in sources.totals().items():
                yield Observation(n, dict(key))

        return observe

    @property
    def producers(self) -> CountSources:
        """The sources of ``messaging.client.sent.messages``."""
        return self._producers

    @property
    def consumers(self) -> CountSources:
        """The sources of ``messaging.client.consumed.messages``."""
        return self._consumers


class Registration:
    """Where one interceptor's counts are reported: a counter of its MeterProvider's
    instruments (``side`` picks it: ``Instruments.producers`` or ``.consumers``)."""

    __slots__ = ("_counts", "_provider", "_side", "instruments")

    def __init__(
        self,
        provider: MeterProvider | None,
        counts: CountSource,
        side: Callable[[Instruments], CountSources],
    ) -> None:
        self._provider = provider
        self._counts = counts
        self._side = side
        self.instruments: Instruments | None = None
        """The instruments the counts are reported by (``None`` before the first bind)."""

    def bind(self) -> Instruments | None:
        """The provider's instruments now, the counts reported by them (moved there, totals
        kept, if the provider is another one since the last call); ``None`` when the provider
        records nothing (the API's no-op or proxy: set the global provider first)."""
        if is_noop(self._provider):
            return None
        found = instruments(self._provider)
        if found is not self.instruments:
            self.retire()
            self.instruments = found
            self._side(found).add(self._counts)
        return found

    def retire(self) -> None:
        """Keep the counts in the counter's totals as they are and stop reporting them (a
        closed client's series stays: a cumulative counter never goes back)."""
        if self.instruments is not None:
            self._side(self.instruments).retire(self._counts)


_registry: dict[int, tuple[MeterProvider, Instruments]] = {}
_registry_lock = threading.Lock()


def meter_of(provider: MeterProvider | None) -> tuple[MeterProvider, Meter]:
    """The provider (``None``: the global one now) and the interceptors' meter from it."""
    use = metrics.get_meter_provider() if provider is None else provider
    meter = use.get_meter(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION, schema_url=SCHEMA_URL)
    return use, meter


def instruments(provider: MeterProvider | None) -> Instruments:
    """The shared instruments of ``provider`` (``None``: the global provider)."""
    use, meter = meter_of(provider)
    with _registry_lock:
        found = _registry.get(id(use))
        if found is None or found[0] is not use:
            found = _registry[id(use)] = (use, Instruments(meter))
        return found[1]
