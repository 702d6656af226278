"""What a mirror checks before it copies anything: clusters, topics, rules, dead-letter topics.

Every problem found here is a ConfigurationError at start, naming the rule or topic, never a
failure at the first record.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kheaders._client.reach import cluster_metadata
from kheaders._errors import ConfigurationError
from kheaders.mirror._provenance import check_cluster_id
from kheaders.mirror._routes import SAME_TOPIC, RoutingTable

ClusterConfig = str | Mapping[str, Any]
"""A cluster: its bootstrap servers, or a librdkafka client config (security included)."""


def client_config(cluster: ClusterConfig) -> dict[str, Any]:
    """A librdkafka config for ``cluster`` (a bootstrap string becomes ``bootstrap.servers``)."""
    if isinstance(cluster, str):
        return {"bootstrap.servers": cluster}
    config = dict(cluster)
    if "bootstrap.servers" not in config:
        raise ConfigurationError("bootstrap.servers: a cluster config must name its brokers")
    return config


def metadata(config: Mapping[str, Any], what: str, timeout: float) -> Any:
    """The cluster's metadata. Raises BrokerUnavailableError naming ``what`` (source/target),
    the bootstrap servers and the cause (a refused password, an unverified certificate)."""
    return cluster_metadata(config, f"{what} cluster", timeout)


def _visible(meta: Any) -> dict[str, int]:
    return {
        name: len(t.partitions)
        for name, t in meta.topics.items()
        if t.error is None and not name.startswith("__")
    }


@dataclass(frozen=True)
class Plan:
    """What the checks found: the clusters' ids, the source topics, the target topics'
    partition counts, and the dead-letter topic of each source topic."""

    source_id: str
    target_id: str
    source_topics: tuple[str, ...]
    target_partitions: dict[str, int]
    dead_letter: dict[str, str]


def plan(
    source: Mapping[str, Any],
    target: Mapping[str, Any],
    topics: Sequence[str] | str,
    table: RoutingTable,
    *,
    source_name: str | None,
    target_name: str | None,
    dead_letter_topic: str,
    timeout: float = 15.0,
) -> Plan:
    """Check the mirror's settings against both clusters; the resulting :class:`Plan`.

    ``topics`` is a list of names or one regular expression starting with ``^`` (matched
    against the source's topics now, the dead-letter topics of the matches left out).
    Raises ConfigurationError for a cluster id that cannot be a hop, the same id on both
    sides, a missing source topic, a pattern matching none, a rule that can never match, a
    target topic or a dead-letter topic that does not exist; BrokerUnavailableError when a
    cluster does not answer.
    """
    src_meta = metadata(source, "source", timeout)
    dst_meta = metadata(target, "target", timeout)
    source_id = check_cluster_id(source_name or src_meta.cluster_id or "", "source")
    target_id = check_cluster_id(target_name or dst_meta.cluster_id or "", "target")
    if source_id == target_id:
        raise ConfigurationError(
            f"source and target both have the cluster id {source_id!r}: a mirror needs two"
            " clusters (configure distinct names if they really are two)"
        )
    on_source = _visible(src_meta)
    if isinstance(topics, str):
        if not topics.startswith("^"):
            raise ConfigurationError(f"topics: a pattern starts with '^', got {topics!r}")
        pattern = re.compile(topics[1:])
        matched = sorted(t for t in on_source if pattern.match(t))
        letters = {dead_letter_topic.replace(SAME_TOPIC, t) for t in matched}
        names = tuple(t for t in matched if t not in letters)  # never the dead letters
        if not names:
            raise ConfigurationError(f"topics: the pattern {topics!r} matches no source topic")
    else:
        names = tuple(topics)
        if not names:
            raise ConfigurationError("topics: name at least one source topic")
        missing = [t for t in names if t not in on_source]
        if missing:
            raise ConfigurationError(f"topics: not on the source cluster: {', '.join(missing)}")
    table.check_topics(names)
    on_target = _visible(dst_meta)
    for topic, rule in table.target_names(names).items():
        if topic not in on_target:
            raise ConfigurationError(
                f"routing rule {rule!r}: target topic {topic!r} does not exist on the target"
                f" cluster {target_id!r}"
            )
    dead_letter = {t: dead_letter_topic.replace(SAME_TOPIC, t) for t in names}
    for topic, dlt in dead_letter.items():
        if dlt not in on_source:
            raise ConfigurationError(
                f"dead_letter_topic: {dlt!r} (for {topic!r}) does not exist on the source"
                f" cluster {source_id!r}"
            )
    return Plan(source_id, target_id, names, on_target, dead_letter)
