"""A processor's clients from one config: the consumer's part and the producer's."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kheaders._client.config import KEY_DESERIALIZER, VALUE_DESERIALIZER, resolve
from kheaders._errors import ConfigurationError
from kheaders._runner import connection_config

PRODUCER_DEFAULTS: dict[str, object] = {"acks": "all", "enable.idempotence": False, "linger.ms": 5}
"""Republishing must be acknowledged by every in-sync replica before a commit moves past it.
Idempotence stays off: retry records carry their own order (a due time each)."""


def consumer_parts(
    config: Mapping[str, object],
) -> tuple[dict[str, object], Callable[..., object] | None, Callable[..., object] | None]:
    """The consumer's config (deserializers taken out: the processor runs them after the
    header checks, keeping the consumed bytes) and the bound deserializers.

    Raises ConfigurationError for ``enable.auto.commit`` turned on (commits are the
    processor's), a missing ``group.id``, or a bad deserializer setting.
    """
    rest = dict(config)
    serde = {k: rest.pop(k) for k in (KEY_DESERIALIZER, VALUE_DESERIALIZER) if k in rest}
    if not rest.get("group.id"):
        raise ConfigurationError("group.id: a processor commits its progress for a group")
    for key in ("enable.auto.commit", "enable.auto.offset.store"):
        if str(rest.get(key, "false")).lower() == "true":
            raise ConfigurationError(f"{key}: the processor commits what it handled; leave it out")
        rest[key] = False
    setup = resolve(serde, interceptors=(), key=None, value=None, producer=False)
    setup.chain.close()
    return rest, setup.key, setup.value


def producer_config(
    config: Mapping[str, object], overrides: Mapping[str, object] | None
) -> dict[str, object]:
    """The retry/dead-letter producer's config: connection settings, defaults, overrides."""
    return {**connection_config(config), **PRODUCER_DEFAULTS, **(overrides or {})}
