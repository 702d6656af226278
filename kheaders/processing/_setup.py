"""A processor's clients from one config: the consumer's part, the producer's, the topics."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from kheaders._client.admin import admin_client
from kheaders._client.config import KEY_DESERIALIZER, VALUE_DESERIALIZER, resolve
from kheaders._errors import ConfigurationError
from kheaders.processing._observe import log

CONNECTION_PREFIXES = (
    "bootstrap.servers",
    "client.id",
    "security.protocol",
    "ssl.",
    "sasl.",
    "socket.",
    "broker.",
    "reconnect.",
    "metadata.",
    "topic.metadata.",
    "client.dns.lookup",
    "api.version.",
    "log_level",
    "log.",
    "logger",
    "error_cb",
    "oauth_cb",
    "enable.ssl.certificate.verification",
)
"""Settings the retry/dead-letter producer and the admin client take from the processor's
config: how to reach and authenticate to the cluster, nothing about consuming."""

PRODUCER_DEFAULTS: dict[str, object] = {"acks": "all", "enable.idempotence": False, "linger.ms": 5}
"""Republishing must be acknowledged by every in-sync replica before a commit moves past it.
Idempotence stays off: retry records carry their own order (a due time each)."""


def connection_config(config: Mapping[str, object]) -> dict[str, object]:
    """The connection and security settings of ``config``."""
    return {k: v for k, v in config.items() if k.startswith(CONNECTION_PREFIXES)}


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


def prepare_topics(
    config: Mapping[str, object],
    targets: Mapping[str, list[str]],
    *,
    create: bool,
    timeout: float = 15.0,
) -> dict[str, int]:
    """Partition counts of every main topic and target; missing targets created (when
    ``create``) with their main topic's partition count.

    Raises KafkaException when the cluster cannot be reached; a target that cannot be
    created is logged and left to the broker's auto-creation.
    """
    with admin_client(connection_config(config)) as admin:
        names = [*targets, *(t for ts in targets.values() for t in ts)]
        counts = _counts(admin, names, timeout)
        missing = [
            NewTopic(t, num_partitions=counts.get(main, 1), replication_factor=-1)
            for main, ts in targets.items()
            for t in ts
            if t not in counts
        ]
        if create and missing:
            futures = admin.create_topics(missing, operation_timeout=timeout)
            for name, future in futures.items():
                try:
                    future.result(timeout=timeout)
                except KafkaException as exc:
                    if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                        log.warning("processing.topic_not_created", topic=name, error=str(exc))
            wanted = [t.topic for t in missing]
            deadline = time.monotonic() + timeout
            while True:
                counts.update(_counts(admin, wanted, timeout))
                if all(t in counts for t in wanted) or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        return counts


def _counts(admin: AdminClient, names: Iterable[str], timeout: float) -> dict[str, int]:
    meta: Any = admin.list_topics(timeout=timeout)
    out: dict[str, int] = {}
    for name in names:
        topic = meta.topics.get(name)
        if topic is not None and topic.error is None and topic.partitions:
            out[name] = len(topic.partitions)
    return out
