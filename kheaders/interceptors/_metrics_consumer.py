"""MetricsConsumerInterceptor (consumed messages) and ``process_metrics`` (process duration)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeAlias

from confluent_kafka import Message
from opentelemetry.metrics import MeterProvider

from kheaders.interceptors._config import Config, server_attributes
from kheaders.interceptors._metrics_common import (
    CONFIG_KEYS,
    AttrKey,
    Attrs,
    CountSources,
    Instruments,
    Registration,
    SeriesCounts,
    error_type,
    group_of,
    instruments,
    is_noop,
)
from kheaders.interceptors._metrics_stats import StatisticsBridge, bridge_of
from kheaders.interceptors._tracing_common import (
    CONSUMER_GROUP,
    DESTINATION_NAME,
    ERROR_TYPE,
    MESSAGING_SYSTEM,
    OPERATION_NAME,
    OPERATION_TYPE,
    PARTITION_ID,
)

AnyMessage: TypeAlias = "Message[Any, Any]"


def _process_attrs(msg: AnyMessage, base: Attrs) -> Attrs:
    attrs: Attrs = {
        **base,
        OPERATION_NAME: "process",
        OPERATION_TYPE: "process",
        DESTINATION_NAME: msg.topic() or "",
    }
    partition = msg.partition()
    if partition is not None and partition >= 0:
        attrs[PARTITION_ID] = str(partition)
    return attrs


@contextmanager
def process_metrics(
    msg: AnyMessage,
    *,
    consumer_group: str | None = None,
    meter_provider: MeterProvider | None = None,
    attributes: Attrs | None = None,
) -> Iterator[None]:
    """Record ``messaging.process.duration`` (``s``) for the processing of one record.

    Attributes: ``messaging.system`` (``kafka``), ``messaging.operation.name`` and
    ``messaging.operation.type`` (``process``), ``messaging.destination.name``,
    ``messaging.destination.partition.id``, ``messaging.consumer.group.name`` (when given),
    plus ``attributes``; an exception escaping the block adds ``error.type`` (its class
    name) and is re-raised.

    >>> from confluent_kafka import Message
    >>> with process_metrics(Message(topic="orders", partition=0, offset=7)):
    ...     pass
    """
    base: Attrs = {MESSAGING_SYSTEM: "kafka", **(attributes or {})}
    if consumer_group:
        base[CONSUMER_GROUP] = consumer_group
    if is_noop(meter_provider):
        yield
        return
    histogram = instruments(meter_provider).process_duration
    start = time.perf_counter()
    try:
        yield
    except BaseException as exc:
        attrs = _process_attrs(msg, base)
        attrs[ERROR_TYPE] = error_type(exc)
        histogram.record(time.perf_counter() - start, attrs)
        raise
    histogram.record(time.perf_counter() - start, _process_attrs(msg, base))


def _consumers(found: Instruments) -> CountSources:
    return found.consumers


class MetricsConsumerInterceptor:
    """Consumer interceptor counting ``messaging.client.consumed.messages`` (``{message}``).

    Each record a batch hands to the application (error events excepted) counts once, with
    ``messaging.system`` (``kafka``), ``messaging.operation.name`` (``poll``),
    ``messaging.destination.name``, ``messaging.destination.partition.id``,
    ``messaging.consumer.group.name`` (``group.id``) and ``server.address``/``server.port``.
    Records that fail to deserialize never reach interceptors: kheaders counts them in
    ``kheaders.consumer.deserialization.failures``. Processing time is the application's:
    wrap it in :meth:`process` (``messaging.process.duration``).

    With no MeterProvider (the API's no-op or proxy provider when built or configured) it
    has no ``on_consume`` (a property raising AttributeError): the chain leaves it out.
    Messages are returned unchanged.
    """

    __slots__ = ("_base", "_bridge", "_counts", "_off", "_provider", "_registration")
    config_keys = CONFIG_KEYS
    """The client settings it reads (kheaders routes them to it, never to librdkafka)."""

    def __init__(self, *, meter_provider: MeterProvider | None = None) -> None:
        self._provider = meter_provider
        self._base: Attrs = {MESSAGING_SYSTEM: "kafka"}
        self._counts = SeriesCounts(self._consumed_attributes)
        self._bridge: StatisticsBridge | None = None
        self._registration = Registration(meter_provider, self._counts, _consumers)
        self._bind()

    def _bind(self) -> None:
        self._off = self._registration.bind() is None

    def configure(self, config: Config) -> None:
        """Read ``group.id`` and ``bootstrap.servers`` for the attributes."""
        base: Attrs = {MESSAGING_SYSTEM: "kafka", **server_attributes(config)}
        group = group_of(config)
        if group:
            base[CONSUMER_GROUP] = group
        self._base = base
        self._counts.reset_attributes()
        self._bridge = bridge_of(config)
        self._bind()

    @property
    def recording(self) -> bool:
        """Whether a MeterProvider that records was found (else ``on_consume`` is a no-op)."""
        return not self._off

    @property
    def on_consume(self) -> Callable[[list[AnyMessage]], list[AnyMessage]]:
        """The batch hook; absent (AttributeError) when nothing records."""
        if self._off:
            raise AttributeError("on_consume: no MeterProvider records")
        return self._consume

    def _consume(self, messages: list[AnyMessage]) -> list[AnyMessage]:
        """Count the batch's records by topic and partition; return ``messages``."""
        if not messages:
            return messages
        batch: dict[object, int] = {}
        get = batch.get
        for msg in messages:
            if msg.error() is None:
                key = (msg.topic(), msg.partition())
                batch[key] = get(key, 0) + 1
        if batch:
            self._counts.add_all(batch)
        return messages

    def _consumed_attributes(self, raw: tuple[str | None, int | None]) -> Attrs:
        topic, partition = raw
        attrs: Attrs = {**self._base, OPERATION_NAME: "poll", DESTINATION_NAME: topic or ""}
        if partition is not None and partition >= 0:
            attrs[PARTITION_ID] = str(partition)
        return attrs

    def counts(self) -> list[tuple[AttrKey, int]]:
        """Records consumed so far, by the attributes of the consumed-messages counter."""
        return self._counts.counts()

    def close(self) -> None:
        """Keep the counts in the counter's totals (a closed client's series stays); stop the
        statistics bridge of the client's config, if any."""
        self._registration.retire()
        if self._bridge is not None:
            self._bridge.close()

    def process(self, msg: AnyMessage) -> AbstractContextManager[None]:
        """:func:`process_metrics` for ``msg`` with this consumer's group and server."""
        extra = {k: v for k, v in self._base.items() if k != CONSUMER_GROUP}
        group = self._base.get(CONSUMER_GROUP)
        return process_metrics(
            msg,
            consumer_group=group if isinstance(group, str) else None,
            meter_provider=self._provider,
            attributes=extra,
        )
