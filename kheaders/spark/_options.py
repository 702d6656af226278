"""Options of the ``kheaders`` Spark source and sink, named and checked as Spark's connector."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from kheaders._errors import ConfigurationError
from kheaders._settings import config_bool

EARLIEST = -2
LATEST = -1

# Settings the source controls itself; Spark's connector rejects them the same way.
_SOURCE_CONTROLLED = ("auto.offset.reset", "enable.auto.commit")
# Options of Spark's connector this source does not implement: refused, never silently ignored.
_UNSUPPORTED = (
    "startingTimestamp",
    "endingTimestamp",
    "startingOffsetsByTimestamp",
    "endingOffsetsByTimestamp",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
)
_SUBSCRIPTIONS = ("subscribe", "subscribePattern", "assign")

# An offset spec: "earliest", "latest", or per topic, per partition an offset (-2/-1 allowed).
OffsetSpec = str | dict[str, dict[int, int]]


def _get(options: Mapping[str, str], name: str) -> str | None:
    # Spark's option map is case-insensitive with .get; a plain dict is tried in both spellings.
    value = options.get(name)
    if value is None:
        value = options.get(name.lower())
    return value


def kafka_config(options: Mapping[str, str], *, consumer: bool) -> dict[str, str]:
    """The librdkafka settings: every ``kafka.*`` option with the prefix removed.

    Raises ConfigurationError if ``kafka.bootstrap.servers`` is missing, or, for a consumer,
    if a setting the source controls (``auto.offset.reset``, ``enable.auto.commit``) is given.
    """
    conf: dict[str, str] = {}
    for key, value in options.items():
        if key.lower().startswith("kafka."):
            conf[key[len("kafka.") :].lower()] = value
    if "bootstrap.servers" not in conf:
        raise ConfigurationError("option 'kafka.bootstrap.servers' must be specified")
    if consumer:
        for name in _SOURCE_CONTROLLED:
            if name in conf:
                raise ConfigurationError(
                    f"Kafka option 'kafka.{name}' is not supported: the source manages offsets "
                    "itself; use startingOffsets/endingOffsets instead"
                )
    return conf


def parse_offsets(text: str | None, name: str, default: str) -> OffsetSpec:
    """Parse ``earliest``/``latest`` or ``{"topic": {"0": 23, "1": -2}}``.

    Raises ConfigurationError naming the option when the text is neither.
    """
    if text is None:
        return default
    stripped = text.strip()
    if stripped.lower() in ("earliest", "latest"):
        return stripped.lower()
    try:
        raw = json.loads(stripped)
        if not isinstance(raw, dict):
            raise TypeError("not a JSON object")
        return {
            str(topic): {int(p): int(o) for p, o in parts.items()} for topic, parts in raw.items()
        }
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigurationError(
            f"option '{name}' must be 'earliest', 'latest' or JSON like "
            f'{{"topic": {{"0": 23, "1": -2}}}}, got {text!r}'
        ) from exc


def _bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    text = _get(options, name)
    return default if text is None else config_bool(text, f"option {name!r}")


def _positive(options: Mapping[str, str], name: str) -> int | None:
    text = _get(options, name)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError as exc:
        raise ConfigurationError(f"option '{name}' must be a positive integer: {text!r}") from exc
    if value <= 0:
        raise ConfigurationError(f"option '{name}' must be a positive integer: {text!r}")
    return value


@dataclass(frozen=True)
class SourceOptions:
    """The parsed read options (picklable: they travel to the executors)."""

    conf: dict[str, str]
    subscription: tuple[str, str]  # (kind, value): subscribe | subscribePattern | assign
    starting: OffsetSpec
    ending: OffsetSpec
    include_headers: bool
    fail_on_data_loss: bool
    max_offsets_per_trigger: int | None
    min_partitions: int | None
    poll_timeout_ms: int
    batch_size: int
    group_id: str = field(default_factory=lambda: f"kheaders-spark-{uuid.uuid4()}")


def source_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Parse and check read options as Spark's connector does.

    Raises ConfigurationError naming the option at fault (also when not exactly one of
    subscribe/subscribePattern/assign is given).
    """
    conf = kafka_config(options, consumer=True)
    for name in _UNSUPPORTED:
        if _get(options, name) is not None:
            raise ConfigurationError(
                f"option '{name}' of Spark's Kafka connector is not supported by the kheaders "
                "source; use startingOffsets/endingOffsets (or format 'kafka' with the JVM "
                "connector)"
            )
    given = [(kind, _get(options, kind)) for kind in _SUBSCRIPTIONS]
    chosen = [(kind, value) for kind, value in given if value is not None]
    if len(chosen) != 1:
        raise ConfigurationError(
            "exactly one of the options 'subscribe', 'subscribePattern' or 'assign' must be "
            f"specified, got {[kind for kind, _ in chosen] or 'none'}"
        )
    kind, value = chosen[0]
    assert value is not None
    if kind == "subscribe" and not [t for t in value.split(",") if t.strip()]:
        raise ConfigurationError("option 'subscribe' must name at least one topic")
    if kind == "assign":
        parse_assign(value)
    starting = parse_offsets(
        _get(options, "startingOffsets"), "startingOffsets", "latest" if streaming else "earliest"
    )
    ending_text = _get(options, "endingOffsets")
    if streaming and ending_text is not None:
        raise ConfigurationError("option 'endingOffsets' is not supported in streaming queries")
    ending = parse_offsets(ending_text, "endingOffsets", "latest")
    if not streaming:
        _check_batch_bounds(starting, ending)
    poll_timeout = _positive(options, "kafkaConsumer.pollTimeoutMs") or 120_000
    return SourceOptions(
        conf=conf,
        subscription=(kind, value),
        starting=starting,
        ending=ending,
        include_headers=_bool(options, "includeHeaders", False),
        fail_on_data_loss=_bool(options, "failOnDataLoss", True),
        max_offsets_per_trigger=_positive(options, "maxOffsetsPerTrigger"),
        min_partitions=_positive(options, "minPartitions"),
        poll_timeout_ms=poll_timeout,
        batch_size=_positive(options, "kheaders.batchSize") or 5000,
        group_id=conf.get("group.id")
        or f"{_get(options, 'groupIdPrefix') or 'kheaders-spark'}-{uuid.uuid4()}",
    )


def _check_batch_bounds(starting: OffsetSpec, ending: OffsetSpec) -> None:
    if starting == "latest":
        raise ConfigurationError("startingOffsets 'latest' is not valid for batch queries")
    if ending == "earliest":
        raise ConfigurationError("endingOffsets 'earliest' is not valid for batch queries")
    if isinstance(starting, dict) and any(
        o == LATEST for p in starting.values() for o in p.values()
    ):
        raise ConfigurationError("startingOffsets may not use -1 (latest) in batch queries")
    if isinstance(ending, dict) and any(o == EARLIEST for p in ending.values() for o in p.values()):
        raise ConfigurationError("endingOffsets may not use -2 (earliest) in batch queries")


def parse_assign(text: str) -> list[tuple[str, int]]:
    """Parse ``{"topic": [0, 1]}`` into topic-partitions.

    Raises ConfigurationError naming ``assign`` when the JSON has another shape.
    """
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise TypeError("not a JSON object")
        return [(str(t), int(p)) for t, parts in raw.items() for p in parts]
    except (ValueError, TypeError) as exc:
        raise ConfigurationError(
            f"option 'assign' must be JSON like {{\"topic\": [0, 1]}}, got {text!r}"
        ) from exc
