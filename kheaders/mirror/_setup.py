"""What a mirror checks before it copies anything: clusters, topics, rules, dead-letter topics.

Every problem found here is a ConfigurationError at start, naming the rule or topic, never a
failure at the first record; one error lists them all, so one run shows everything to fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kheaders._client.reach import cluster_metadata
from kheaders._errors import BrokerUnavailableError, ConfigurationError
from kheaders._log import get_logger
from kheaders.deadletter import DeadLetter
from kheaders.deadletter._topics import ensure_topics
from kheaders.mirror._provenance import check_cluster_id
from kheaders.mirror._routes import RoutingTable

_log = get_logger("kheaders.mirror")

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
    its bootstrap servers and the cause (a refused password, an unverified certificate, else
    librdkafka's reason); its per-attempt log lines are kept off stderr."""
    return cluster_metadata({"log_level": 0, **config}, f"{what} cluster", timeout)


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
    dead_letter: DeadLetter,
    create_topics: bool = False,
    timeout: float = 15.0,
) -> Plan:
    """Check the mirror's settings against both clusters; the resulting :class:`Plan`.

    ``topics`` is a list of names or one regular expression starting with ``^`` (matched
    against the source's topics now, the dead-letter topics of the matches left out).
    ``create_topics`` creates missing target topics (on the target) with their source
    topic's partition count instead of refusing them. Missing dead-letter topics (on the
    source) are created as every dead-letter topic is (:mod:`kheaders.deadletter`), where
    the source allows it. Neither is created when anything else is wrong (the clusters may
    be the wrong ones).

    Raises ConfigurationError listing every problem found, one per line: a cluster id that
    cannot be a hop, the same id on both sides, a missing source topic, a pattern matching
    none, a rule that can never match, a target topic or a dead-letter topic that does not
    exist; BrokerUnavailableError when a cluster does not answer.
    """
    src_meta = metadata(source, "source", timeout)
    dst_meta = metadata(target, "target", timeout)
    problems: list[str] = []
    source_id = _cluster_id(source_name or src_meta.cluster_id or "", "source", problems)
    target_id = _cluster_id(target_name or dst_meta.cluster_id or "", "target", problems)
    if source_id and source_id == target_id:
        problems.append(
            f"source and target both have the cluster id {source_id!r}: a mirror needs two"
            " clusters (if they really are two, name them: source_name/target_name,"
            " --source-name/--target-name on the command line)"
        )
    on_source = _visible(src_meta)
    names = _source_topics(topics, on_source, dead_letter, problems)
    try:
        table.check_topics(names)
    except ConfigurationError as exc:
        problems.append(str(exc))
    letters = {t: dead_letter.topic_for(t) for t in names}
    on_target = _visible(dst_meta)
    to_target = _missing_targets(table, names, on_source, on_target)
    to_source = {d: on_source[t] for t, d in letters.items() if d not in on_source}
    if to_source and not problems:  # never on a mistake
        try:
            ensure_topics(
                source, {t: [d] for t, d in letters.items() if d in to_source}, timeout=timeout
            )
        except ConfigurationError as exc:
            problems.append(str(exc))  # names each topic, and why
        to_source = {}
    if create_topics and to_target and not problems:
        _create(target, to_target, timeout)
        on_target = _visible(metadata(target, "target", timeout))
        to_target = {t: n for t, n in to_target.items() if t not in on_target}
    rules = table.target_names(names)
    for topic in to_target:
        problems.append(
            f"routing rule {rules[topic]!r}: target topic {topic!r} does not exist on the"
            f" target cluster {target_id!r}"
        )
    for topic, dlt in letters.items():
        if dlt in to_source:
            problems.append(
                f"dead_letter: {dlt!r} (for {topic!r}) does not exist on the source"
                f" cluster {source_id!r} and was not created"
            )
    if problems:
        if to_target:
            problems.append("create the missing topics with --create-topics (create_topics=True)")
        if len(problems) == 1:
            raise ConfigurationError(problems[0])
        raise ConfigurationError(
            f"{len(problems)} problems:\n" + "\n".join(f"  - {p}" for p in problems)
        )
    return Plan(source_id, target_id, names, on_target, letters)


def _cluster_id(name: str, what: str, problems: list[str]) -> str:
    try:
        return check_cluster_id(name, what)
    except ConfigurationError as exc:
        problems.append(str(exc))
        return ""


def _source_topics(
    topics: Sequence[str] | str,
    on_source: Mapping[str, int],
    dead_letter: DeadLetter,
    problems: list[str],
) -> tuple[str, ...]:
    """The mirrored source topics that exist (a pattern resolved, its dead letters left out)."""
    if isinstance(topics, str):
        if not topics.startswith("^"):
            problems.append(f"topics: a pattern starts with '^', got {topics!r}")
            return ()
        pattern = re.compile(topics[1:])
        matched = sorted(t for t in on_source if pattern.match(t))
        letters = {dead_letter.topic_for(t) for t in matched}
        names = tuple(t for t in matched if t not in letters)  # never the dead letters
        if not names:
            problems.append(f"topics: the pattern {topics!r} matches no source topic")
        return names
    if not topics:
        problems.append("topics: name at least one source topic")
    missing = [t for t in topics if t not in on_source]
    if missing:
        problems.append(f"topics: not on the source cluster: {', '.join(missing)}")
    return tuple(t for t in topics if t in on_source)


def _missing_targets(
    table: RoutingTable,
    names: Sequence[str],
    on_source: Mapping[str, int],
    on_target: Mapping[str, int],
) -> dict[str, int]:
    """Target topics the rules can send to that the target lacks -> the partition count to
    create each with: the largest of the source topics routed there."""
    out: dict[str, int] = {}
    for topic in names:
        for target in table.target_names([topic]):
            if target not in on_target:
                out[target] = max(out.get(target, 0), on_source[topic])
    return out


def _create(target: Mapping[str, Any], to_target: Mapping[str, int], timeout: float) -> None:
    """Create the missing target topics; what still fails shows in the check that follows."""
    from kheaders.broker import create_topic

    for topic, partitions in to_target.items():  # another cluster: its source's count
        try:
            create_topic(
                target, topic, partitions=partitions, replication_factor=-1, timeout=timeout
            )
        except (ConfigurationError, BrokerUnavailableError) as exc:
            _log.warning("mirror.topic_not_created", topic=topic, error=str(exc))
