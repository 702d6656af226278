"""A missing dead-letter topic, the same answer for every user: created with its source
topic's partition count where the client may create topics, else refused at start."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.cimpl import NewTopic

from kheaders._client.admin import admin_client
from kheaders._client.reach import cluster_metadata
from kheaders._errors import ConfigurationError
from kheaders._log import get_logger
from kheaders._runner import connection_config

_log = get_logger("kheaders.deadletter")


def ensure_topics(
    config: Mapping[str, object],
    targets: Mapping[str, list[str]],
    *,
    create: bool = True,
    timeout: float = 15.0,
) -> dict[str, int]:
    """Partition counts of every source topic (the keys of ``targets``) and of the topics
    records of each are republished to (its retry and dead-letter topics); the missing
    ones created (when ``create``) with their source topic's partition count.

    Raises ConfigurationError naming each republishing topic that is still missing (not
    created: ``create`` off, no permission, a broker refusing; with the broker's reason);
    BrokerUnavailableError naming the bootstrap servers and the cause when the cluster
    cannot be reached.
    """
    connection = connection_config(config)
    names = [*targets, *(t for ts in targets.values() for t in ts)]
    counts = _present(cluster_metadata(connection, "the cluster", timeout), names)
    missing = {
        t: counts.get(main, 1) for main, ts in targets.items() for t in ts if t not in counts
    }
    reasons: dict[str, str] = {}
    if create and missing:
        with admin_client(connection) as admin:
            new = [NewTopic(t, num_partitions=n, replication_factor=-1) for t, n in missing.items()]
            for name, future in admin.create_topics(new, operation_timeout=timeout).items():
                try:
                    future.result(timeout=timeout)
                except KafkaException as exc:
                    if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                        reasons[name] = exc.args[0].str()
            wanted = [t for t in missing if t not in reasons]  # refused ones never appear
            deadline = time.monotonic() + timeout
            while wanted:
                counts.update(_present(admin.list_topics(timeout=timeout), wanted))
                if all(t in counts for t in wanted) or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
    absent = [t for t in missing if t not in counts]
    if absent:
        said = "; ".join(f"{t!r}" + (f" ({reasons[t]})" if t in reasons else "") for t in absent)
        how = "could not be created" if create else "were not created (creation is off)"
        raise ConfigurationError(
            f"dead_letter: the topics failed records go to are missing and {how}: {said};"
            " create them (with their source topic's partition count) or let this client"
            " create topics"
        )
    return counts


def _present(meta: Any, names: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in names:
        topic = meta.topics.get(name)
        if topic is not None and topic.error is None and topic.partitions:
            out[name] = len(topic.partitions)
    return out
