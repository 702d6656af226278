"""librdkafka's statistics (``stats_cb``) as OpenTelemetry observable instruments.

librdkafka emits a JSON document every ``statistics.interval.ms`` (served by ``poll()``);
:class:`StatisticsBridge` keeps the latest one per client, and the instruments below read it
whenever the SDK collects:

- ``kheaders.librdkafka.queue.messages`` / ``.queue.bytes`` (up-down counters, producers):
  ``msg_cnt`` / ``msg_size``, what waits in the producer queues;
- ``kheaders.librdkafka.consumer.lag`` / ``.consumer.lag.stored`` (gauges, per topic and
  partition): ``consumer_lag`` (from the committed offset) / ``consumer_lag_stored`` (from
  the stored offset, the position); -1 (unknown) is left out;
- ``kheaders.librdkafka.broker.rtt`` / ``.broker.rtt.p99`` (gauges, seconds, per broker):
  ``rtt.avg`` / ``rtt.p99`` (microseconds in librdkafka).

The table with attributes is in docs/interceptors.md. Every series also carries
``messaging.system`` (``kafka``) and ``messaging.client.id`` (librdkafka's ``client_id``).
Brokers without a node id (bootstrap and internal handles) or without round-trip samples in
the window are left out.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.metrics import CallbackOptions, Meter, MeterProvider, Observation

from kheaders import ConfigurationError
from kheaders.interceptors._metrics_common import Attrs, is_noop, meter_of
from kheaders.interceptors._tracing_common import (
    CLIENT_ID,
    CONSUMER_GROUP,
    DESTINATION_NAME,
    MESSAGING_SYSTEM,
    PARTITION_ID,
    SERVER_ADDRESS,
    SERVER_PORT,
)

QUEUE_MESSAGES = "kheaders.librdkafka.queue.messages"
QUEUE_BYTES = "kheaders.librdkafka.queue.bytes"
CONSUMER_LAG = "kheaders.librdkafka.consumer.lag"
CONSUMER_LAG_STORED = "kheaders.librdkafka.consumer.lag.stored"
BROKER_RTT = "kheaders.librdkafka.broker.rtt"
BROKER_RTT_P99 = "kheaders.librdkafka.broker.rtt.p99"
BROKER_ID = "kheaders.broker.id"
STATS_INTERVAL = "statistics.interval.ms"
DEFAULT_INTERVAL_MS = 5000

StatsCallback = Callable[[str], object]


@dataclass(frozen=True, slots=True)
class Statistics:
    """The parts of one librdkafka statistics document the instruments report."""

    client_id: str = ""
    client_type: str = ""
    queue_messages: int = 0
    queue_bytes: int = 0
    lag: dict[tuple[str, int], int] = field(default_factory=dict)
    """Consumer lag by (topic, partition) from the committed offset; unknown lag left out."""
    lag_stored: dict[tuple[str, int], int] = field(default_factory=dict)
    """Consumer lag from the stored offset (the consumer's position, committed or not)."""
    rtt: dict[tuple[int, str], tuple[float, float]] = field(default_factory=dict)
    """Round-trip time (avg, p99) in seconds by (broker node id, ``host:port``)."""

    @classmethod
    def parse(cls, document: str) -> Statistics:
        """Read a librdkafka statistics JSON document.

        Raises ValueError when it is not JSON or not an object.
        """
        data = json.loads(document)
        if not isinstance(data, dict):
            raise ValueError("librdkafka statistics: expected a JSON object")
        lag: dict[tuple[str, int], int] = {}
        stored: dict[tuple[str, int], int] = {}
        for topic, tdata in _mapping(data.get("topics")).items():
            for part, pdata in _mapping(_mapping(tdata).get("partitions")).items():
                if int(part) < 0:  # librdkafka's internal unassigned partition
                    continue
                for found, name in ((lag, "consumer_lag"), (stored, "consumer_lag_stored")):
                    value = _mapping(pdata).get(name)
                    if isinstance(value, int) and value >= 0:
                        found[(topic, int(part))] = value
        rtt: dict[tuple[int, str], tuple[float, float]] = {}
        for bdata in _mapping(data.get("brokers")).values():
            broker = _mapping(bdata)
            node = broker.get("nodeid")
            window = _mapping(broker.get("rtt"))
            if not isinstance(node, int) or node < 0 or not window.get("cnt"):
                continue
            name = str(broker.get("nodename") or "")
            rtt[(node, name)] = (
                float(window.get("avg", 0)) / 1e6,
                float(window.get("p99", 0)) / 1e6,
            )
        return cls(
            client_id=str(data.get("client_id", "")),
            client_type=str(data.get("type", "")),
            queue_messages=int(data.get("msg_cnt", 0)),
            queue_bytes=int(data.get("msg_size", 0)),
            lag=lag,
            lag_stored=stored,
            rtt=rtt,
        )


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


class StatisticsBridge:
    """A ``stats_cb`` that keeps each client's latest statistics for the observable instruments.

    Pass it as ``stats_cb`` (or let :func:`with_statistics` do it); ``chain`` is the callback
    it calls afterwards with the same JSON text (the one the config had). A document that
    does not parse is skipped (the chained callback still gets it). ``group_id`` labels the
    lag series. :meth:`close` stops reporting (the instruments then leave this client out).
    """

    __slots__ = ("__weakref__", "_chain", "_closed", "_latest", "group_id", "recording")

    def __init__(
        self,
        *,
        chain: StatsCallback | None = None,
        group_id: str | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        if chain is not None and not callable(chain):
            raise ConfigurationError(f"stats_cb: expected a callable, got {chain!r}")
        self._chain = chain
        self.group_id = group_id
        self._latest: Statistics | None = None
        self._closed = False
        self.recording = not is_noop(meter_provider)
        """Whether a MeterProvider records (else documents are still kept, not reported)."""
        if self.recording:
            _instruments(meter_provider).bridges.add(self)

    def __call__(self, document: str) -> None:
        """librdkafka's ``stats_cb``: keep the parsed document, then call the chained one."""
        with suppress(ValueError, TypeError):  # a malformed document: keep the last good one
            self._latest = Statistics.parse(document)
        if self._chain is not None:
            self._chain(document)

    @property
    def latest(self) -> Statistics | None:
        """The last statistics received (``None`` before the first)."""
        return self._latest

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def close(self) -> None:
        """Stop reporting this client's statistics."""
        self._closed = True

    def observations(self) -> Iterator[tuple[str, float, Attrs]]:
        """``(instrument, value, attributes)`` for the latest statistics (nothing if closed)."""
        stats = self._latest
        if stats is None or self._closed:
            return
        base: Attrs = {MESSAGING_SYSTEM: "kafka", CLIENT_ID: stats.client_id}
        if stats.client_type == "producer":
            yield QUEUE_MESSAGES, stats.queue_messages, base
            yield QUEUE_BYTES, stats.queue_bytes, base
        for name, lags in ((CONSUMER_LAG, stats.lag), (CONSUMER_LAG_STORED, stats.lag_stored)):
            for (topic, partition), lag in lags.items():
                attrs: Attrs = {**base, DESTINATION_NAME: topic, PARTITION_ID: str(partition)}
                if self.group_id:
                    attrs[CONSUMER_GROUP] = self.group_id
                yield name, lag, attrs
        for (node, name), (avg, p99) in stats.rtt.items():
            attrs = {**base, BROKER_ID: node}
            host, sep, port = name.rpartition(":")
            if sep and port.isdigit():
                attrs[SERVER_ADDRESS] = host
                attrs[SERVER_PORT] = int(port)
            elif name:
                attrs[SERVER_ADDRESS] = name
            yield BROKER_RTT, avg, attrs
            yield BROKER_RTT_P99, p99, attrs


def _add(a: float, b: float) -> float:
    return a + b


class _StatsInstruments:
    """The statistics instruments of one MeterProvider, reading every live bridge."""

    def __init__(self, meter: Meter) -> None:
        self.bridges: weakref.WeakSet[StatisticsBridge] = weakref.WeakSet()
        specs = (
            (QUEUE_MESSAGES, "{message}", "Records waiting in librdkafka's producer queues.", 0),
            (QUEUE_BYTES, "By", "Bytes waiting in librdkafka's producer queues.", 0),
            (CONSUMER_LAG, "{message}", "Consumer lag per partition, committed (librdkafka).", 1),
            (CONSUMER_LAG_STORED, "{message}", "Consumer lag per partition, position.", 1),
            (BROKER_RTT, "s", "Broker round-trip time, window average (librdkafka).", 1),
            (BROKER_RTT_P99, "s", "Broker round-trip time, window p99 (librdkafka).", 1),
        )
        for name, unit, description, gauge in specs:
            if gauge:
                meter.create_observable_gauge(
                    name, [self._observer(name, max)], unit=unit, description=description
                )
            else:
                meter.create_observable_up_down_counter(
                    name, [self._observer(name, _add)], unit=unit, description=description
                )

    def _observer(
        self, name: str, merge: Callable[[float, float], float]
    ) -> Callable[[CallbackOptions], Iterator[Observation]]:
        """Observations of ``name`` over every live bridge; equal series merged by ``merge``
        (sums for queue depths, the largest for gauges)."""

        def observe(_options: CallbackOptions) -> Iterator[Observation]:
            totals: dict[tuple[tuple[str, str | int], ...], float] = {}
            for bridge in list(self.bridges):
                for instrument, value, attrs in bridge.observations():
                    if instrument == name:
                        key = tuple(sorted(attrs.items()))
                        seen = totals.get(key)
                        totals[key] = value if seen is None else merge(seen, value)
            for key, value in totals.items():
                yield Observation(value, dict(key))

        return observe


_registry: dict[int, tuple[MeterProvider, _StatsInstruments]] = {}
_lock = threading.Lock()


def _instruments(provider: MeterProvider | None) -> _StatsInstruments:
    use, meter = meter_of(provider)
    with _lock:
        found = _registry.get(id(use))
        if found is None or found[0] is not use:
            found = _registry[id(use)] = (use, _StatsInstruments(meter))
        return found[1]


def with_statistics(
    config: Mapping[str, object],
    *,
    interval_ms: int | None = None,
    meter_provider: MeterProvider | None = None,
) -> dict[str, object]:
    """A copy of ``config`` whose ``stats_cb`` feeds the statistics instruments.

    A ``stats_cb`` already in ``config`` is chained (called after, with the same JSON).
    ``statistics.interval.ms`` is ``interval_ms`` when given, else the config's when it is
    above 0, else 5000. Use the result for ``kheaders.Producer``/``Consumer`` or
    ``confluent_kafka.Producer``/``Consumer`` (then wrap it): the callback is fixed when
    librdkafka builds the client, so an existing client cannot be bridged afterwards (call
    a bridge yourself from the ``stats_cb`` it has: ``bridge(json_text)``).

    >>> cfg = with_statistics({"bootstrap.servers": "localhost:9092", "group.id": "g"})
    >>> cfg["statistics.interval.ms"], type(cfg["stats_cb"]).__name__
    (5000, 'StatisticsBridge')

    Raises ConfigurationError for a ``stats_cb`` that is not callable or a bad interval.
    """
    out = dict(config)
    chained = out.get("stats_cb")
    group = out.get("group.id")
    bridge = StatisticsBridge(
        chain=chained,  # type: ignore[arg-type]
        group_id=str(group) if group else None,
        meter_provider=meter_provider,
    )
    if interval_ms is None:
        current = out.get(STATS_INTERVAL)
        try:
            interval_ms = int(str(current)) if current is not None else 0
        except ValueError as exc:
            raise ConfigurationError(
                f"{STATS_INTERVAL}: expected an integer, got {current!r}"
            ) from exc
        interval_ms = interval_ms if interval_ms > 0 else DEFAULT_INTERVAL_MS
    if interval_ms < 1:
        raise ConfigurationError(f"interval_ms: must be >= 1, got {interval_ms}")
    out["stats_cb"] = bridge
    out[STATS_INTERVAL] = interval_ms
    return out


def bridge_of(config: Mapping[str, object]) -> StatisticsBridge | None:
    """The StatisticsBridge a client config feeds, if any."""
    cb = config.get("stats_cb")
    return cb if isinstance(cb, StatisticsBridge) else None
