"""What an exactly-once processor's configs must say, checked at construction: the consumer
reads ``read_committed``, the producer is idempotent with ``acks=all``, and the
transactional id is the processor's argument, never a setting."""

from __future__ import annotations

from collections.abc import Mapping

from kheaders._errors import ConfigurationError, kind_of
from kheaders.processing import _validate as _v

PRODUCER_DEFAULTS: dict[str, object] = {"retry.backoff.ms": 5, "retry.backoff.max.ms": 25}
"""Each transaction's first call to its coordinator (adding the offsets, or the first
output's partition) is refused with CONCURRENT_TRANSACTIONS until the broker has written
the previous transaction's markers (a few ms on a local Apache Kafka 4), and librdkafka tries
again after ``retry.backoff.ms``: at its default, 100 ms growing to 1 s, that wait was
~110 ms per batch (measured, bench/exactly_once.py); at these, ~18 ms."""
DEFAULT_TXN_TIMEOUT_MS = 60_000
"""librdkafka's ``transaction.timeout.ms`` when the producer config leaves it out."""


def _refuse_transactional_id(setting: str, config: Mapping[str, object] | None) -> None:
    if config is not None and "transactional.id" in config:
        raise ConfigurationError(
            f"{setting}: transactional.id: give transactional_id= instead (the processor's"
            " producer owns the transactions)"
        )


def checked_configs(
    transactional_id: object,
    config: Mapping[str, object],
    producer_config: Mapping[str, object] | None,
) -> tuple[dict[str, object], dict[str, object]]:
    """The consumer config (read_committed) and the producer overrides (idempotent) the
    processor runs with. Raises ConfigurationError naming the argument and the setting."""
    if not isinstance(transactional_id, str) or not transactional_id.strip():
        raise ConfigurationError(
            "transactional_id: expected a non-empty str naming this instance (the same on"
            f" every restart of it), got {kind_of(transactional_id)}"
        )
    _v.mapping("config", config)
    _v.mapping("producer_config", producer_config, optional=True)
    _refuse_transactional_id("config", config)
    _refuse_transactional_id("producer_config", producer_config)
    isolation = str(config.get("isolation.level", "read_committed")).lower()
    if isolation != "read_committed":
        raise ConfigurationError(
            "config: isolation.level: an exactly-once processor reads read_committed (its"
            " retry topics are written in transactions); leave it out"
        )
    overrides = {**PRODUCER_DEFAULTS, **(producer_config or {})}
    if str(overrides.get("enable.idempotence", "true")).lower() != "true":
        raise ConfigurationError(
            "producer_config: enable.idempotence: transactions need the idempotent producer;"
            " leave it out"
        )
    if str(overrides.get("acks", "all")).lower() not in {"all", "-1"}:
        raise ConfigurationError("producer_config: acks: transactions need acks=all; leave it out")
    overrides["enable.idempotence"] = True
    return {**config, "isolation.level": "read_committed"}, overrides
