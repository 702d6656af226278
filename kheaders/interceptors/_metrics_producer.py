"""MetricsProducerInterceptor: sent messages and send duration (delivery latency) per record."""

from __future__ import annotations

from collections.abc import Callable

from opentelemetry.metrics import MeterProvider

from kheaders import ConfigurationError, Headers, RecordMetadata
from kheaders.interceptors._config import Config, get_int, server_attributes
from kheaders.interceptors._metrics_common import (
    CONFIG_KEYS,
    DEFAULT_MAX_RATE,
    MAX_PENDING_KEY,
    MAX_RATE_KEY,
    AttrKey,
    Attrs,
    CountSources,
    Instruments,
    Registration,
    Sampler,
    SeriesCounts,
    error_type,
)
from kheaders.interceptors._metrics_stats import StatisticsBridge, bridge_of
from kheaders.interceptors._tracing_common import (
    DESTINATION_NAME,
    ERROR_TYPE,
    MESSAGING_SYSTEM,
    OPERATION_NAME,
    OPERATION_TYPE,
    PARTITION_ID,
)

DEFAULT_MAX_PENDING = 100_000

_RawKey = tuple[str, int, str | None]
"""(topic, partition, error.type or None): one series of ``messaging.client.sent.messages``."""


def _producers(found: Instruments) -> CountSources:
    return found.producers


class MetricsProducerInterceptor:
    """Producer interceptor recording the messaging conventions' producer metrics.

    Per record, when it is acknowledged (delivered, failed, or refused before librdkafka
    took it):

    - ``messaging.client.sent.messages`` (``{message}``) +1, with ``messaging.system``
      (``kafka``), ``messaging.operation.name`` (``send``), ``messaging.destination.name``,
      ``messaging.destination.partition.id`` (when known), ``server.address``/``server.port``
      (first ``bootstrap.servers`` entry) and ``error.type`` when it failed (librdkafka's
      error name such as ``_MSG_TIMED_OUT``, or the exception's class such as
      ``HeaderLimitError``);
    - ``messaging.client.operation.duration`` (``s``): the delivery latency the report
      carries (``RecordMetadata.latency``: librdkafka's measure from ``produce`` to the
      report; for a record refused before librdkafka, the producer's measure of the time
      until the refusal), same attributes plus ``messaging.operation.type`` (``send``). At
      most ``max_durations_per_second`` records a second are timed (0: all), spread evenly;
      the counter is always exact. Metadata without a latency (built by other code) is
      counted, not timed.

    It has only ``on_acknowledgement`` and keeps nothing per record, so a producer whose other
    interceptors and serializers do not see records either keeps its lean path (one small
    report object per record in flight). With no MeterProvider (the API's no-op or proxy
    provider when the interceptor is built or configured) it has no hook at all (a property
    raising AttributeError), so the chain leaves it out and the producer costs what it costs
    without it.

    Config keys: ``kheaders.metrics.duration.max.per.second`` (int >= 0, default 100);
    ``kheaders.metrics.max.pending`` (int >= 1) is still checked but no longer used (no send
    times are kept); ``bootstrap.servers`` feeds ``server.address``.
    Raises ConfigurationError for a bad value.
    """

    __slots__ = (
        "_attrs",
        "_base",
        "_bridge",
        "_counts",
        "_duration",
        "_max_pending",
        "_off",
        "_registration",
        "_sampler",
        "_settings",
    )
    config_keys = CONFIG_KEYS
    """The client settings it reads (kheaders routes them to it, never to librdkafka)."""

    def __init__(
        self,
        *,
        meter_provider: MeterProvider | None = None,
        max_durations_per_second: int | None = None,
        max_pending: int | None = None,
    ) -> None:
        if max_durations_per_second is not None and max_durations_per_second < 0:
            raise ConfigurationError(
                f"max_durations_per_second: must be >= 0, got {max_durations_per_second}"
            )
        if max_pending is not None and max_pending < 1:
            raise ConfigurationError(f"max_pending: must be >= 1, got {max_pending}")
        self._settings = (max_durations_per_second, max_pending)
        self._sampler = Sampler(
            DEFAULT_MAX_RATE if max_durations_per_second is None else max_durations_per_second
        )
        self._max_pending = max_pending or DEFAULT_MAX_PENDING
        self._base: Attrs = {MESSAGING_SYSTEM: "kafka", OPERATION_NAME: "send"}
        self._counts = SeriesCounts(self._sent_attributes)
        self._attrs: dict[_RawKey, Attrs] = {}
        self._bridge: StatisticsBridge | None = None
        self._registration = Registration(meter_provider, self._counts, _producers)
        self._bind()

    def _bind(self) -> None:
        found = self._registration.bind()
        self._off = found is None
        if found is not None:
            self._duration = found.operation_duration

    def configure(self, config: Config) -> None:
        """Read ``bootstrap.servers`` and the ``kheaders.metrics.*`` settings.

        Raises ConfigurationError naming the key at fault.
        """
        rate, pending = self._settings
        if rate is None:
            self._sampler = Sampler(get_int(config, MAX_RATE_KEY, DEFAULT_MAX_RATE, 0))
        if pending is None:
            self._max_pending = get_int(config, MAX_PENDING_KEY, DEFAULT_MAX_PENDING, 1)
        server = server_attributes(config)
        self._base = {MESSAGING_SYSTEM: "kafka", OPERATION_NAME: "send", **server}
        self._attrs = {}
        self._counts.reset_attributes()
        self._bridge = bridge_of(config)
        self._bind()  # a MeterProvider may have been installed since construction

    @property
    def recording(self) -> bool:
        """Whether a MeterProvider that records was found (else every hook is a no-op)."""
        return not self._off

    @property
    def on_acknowledgement(self) -> Callable[[RecordMetadata, object, Headers], None]:
        """The acknowledgement hook; absent (AttributeError) when nothing records."""
        if self._off:
            raise AttributeError("on_acknowledgement: no MeterProvider records")
        return self._acknowledge

    def _acknowledge(self, metadata: RecordMetadata, error: object, _headers: Headers) -> None:
        raw: _RawKey = (
            metadata.topic,
            metadata.partition,
            None if error is None else error_type(error),
        )
        self._counts.add(raw)
        latency = metadata.latency
        if latency is None or self._sampler.take() is None:
            return
        attrs = self._attrs.get(raw)
        if attrs is None:
            attrs = self._attributes(raw, duration=True)
        self._duration.record(latency, attrs)

    def _attributes(self, raw: _RawKey, *, duration: bool) -> Attrs:
        topic, partition, etype = raw
        attrs: Attrs = {**self._base, DESTINATION_NAME: topic}
        if partition >= 0:
            attrs[PARTITION_ID] = str(partition)
        if etype is not None:
            attrs[ERROR_TYPE] = etype
        if duration:
            attrs[OPERATION_TYPE] = "send"
            if len(self._attrs) < 4096:
                self._attrs[raw] = attrs
        return attrs

    def _sent_attributes(self, raw: _RawKey) -> Attrs:
        return self._attributes(raw, duration=False)

    def counts(self) -> list[tuple[AttrKey, int]]:
        """Records acknowledged so far, by the attributes of ``messaging.client.sent.messages``."""
        return self._counts.counts()

    def close(self) -> None:
        """Keep the counts in the counter's totals (a closed client's series stays); stop the
        statistics bridge of the client's config, if any."""
        self._registration.retire()
        if self._bridge is not None:
            self._bridge.close()
