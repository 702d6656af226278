"""Options of the ``kheaders`` Spark source and sink, named and checked as Spark's connector.

The one home of every option: each option of Spark 4's Kafka connector is implemented here
or refused by name; any other name gets a warning naming the closest known one.
"""

from __future__ import annotations

import difflib
import json
import uuid
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kheaders._errors import ConfigurationError
from kheaders._settings import config_bool
from kheaders.spark._arrow import HEADERS_TYPE

EARLIEST = -2
LATEST = -1

# Settings the source controls itself; Spark's connector rejects them the same way.
_SOURCE_CONTROLLED = ("auto.offset.reset", "enable.auto.commit")
# Java client settings Spark's connector refuses (records are always bytes; no interceptors).
_JAVA_ONLY = (
    "key.deserializer",
    "value.deserializer",
    "key.serializer",
    "value.serializer",
    "interceptor.classes",
)
# The Java client's bound on blocking calls, as Spark users set it (kafka.default.api.timeout.ms):
# here the bound on every driver-side metadata and offsets request (librdkafka has no such key).
API_TIMEOUT = "default.api.timeout.ms"
_API_TIMEOUT_MS = 30_000
# Options of Spark's connector this source does not implement: refused, never silently ignored.
_UNSUPPORTED = (
    "startingTimestamp",
    "endingTimestamp",
    "startingOffsetsByTimestamp",
    "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
)
_SUBSCRIPTIONS = ("subscribe", "subscribePattern", "assign")
# Every read option of Spark 4's Kafka connector this source implements, plus its own.
READ_OPTIONS = (
    *_SUBSCRIPTIONS,
    "startingOffsets",
    "endingOffsets",
    "failOnDataLoss",
    "minPartitions",
    "maxRecordsPerPartition",
    "maxOffsetsPerTrigger",
    "fetchOffset.numRetries",
    "fetchOffset.retryIntervalMs",
    "kafkaConsumer.pollTimeoutMs",
    "groupIdPrefix",
    "includeHeaders",
    "kheaders.batchSize",
)
# The sink's options: the topic (else a ``topic`` column) and ``kafka.*``.
WRITE_OPTIONS = ("topic",)
# Set by Spark itself for ``load(path)``/``save(path)``; Spark's connector ignores it too.
_SPARK_SET = ("path",)


def check_option_names(options: Iterable[str], known: Iterable[str]) -> list[str]:
    """Warn about every option that is neither ``kafka.*`` nor known; return their names.

    The warning (a :class:`UserWarning`, also logged) names the option and the closest known
    one, so a typo such as ``startingOffset`` does not pass silently. Case is ignored, as
    Spark ignores it.
    """
    names = {n.lower(): n for n in (*known, *_UNSUPPORTED, *_SPARK_SET)}
    unknown = []
    for option in options:
        low = option.lower()
        if low.startswith("kafka.") or low in names:
            continue
        unknown.append(option)
        close = difflib.get_close_matches(low, list(names), n=1, cutoff=0.6)
        hint = f"; did you mean '{names[close[0]]}'?" if close else ""
        message = f"unknown option '{option}' of the kheaders source/sink is ignored{hint}"
        warnings.warn(message, UserWarning, stacklevel=3)
    return unknown


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
    conf.pop(API_TIMEOUT, None)  # ours (see api_timeout_ms), unknown to librdkafka
    for name in _JAVA_ONLY:
        if name in conf:
            raise ConfigurationError(
                f"Kafka option 'kafka.{name}' is not supported: keys and values are always "
                "bytes and the client is librdkafka (no Java interceptors)"
            )
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


def api_timeout_ms(options: Mapping[str, str]) -> int:
    """``kafka.default.api.timeout.ms`` (the Java client's name, as Spark users set it), else
    30000: how long one driver-side metadata or offsets request may take.

    Raises ConfigurationError unless it is a positive integer.
    """
    return _positive(options, f"kafka.{API_TIMEOUT}") or _API_TIMEOUT_MS


def _non_negative(options: Mapping[str, str], name: str, default: int) -> int:
    value = _integer(options, name, 0, "an integer >= 0")
    return default if value is None else value


def _positive(options: Mapping[str, str], name: str) -> int | None:
    return _integer(options, name, 1, "a positive integer")


def _integer(options: Mapping[str, str], name: str, minimum: int, what: str) -> int | None:
    """Option ``name`` as an int of at least ``minimum``, ``None`` when unset; else raise
    ConfigurationError saying it must be ``what``."""
    text = _get(options, name)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError as exc:
        raise ConfigurationError(f"option '{name}' must be {what}: {text!r}") from exc
    if value < minimum:
        raise ConfigurationError(f"option '{name}' must be {what}: {text!r}")
    return value


@dataclass(frozen=True)
class SourceOptions:
    """The parsed read options (picklable: they travel to the executors). The librdkafka
    settings stay out of the repr: they may hold ``sasl.password``."""

    conf: dict[str, str] = field(repr=False)
    subscription: tuple[str, str]  # (kind, value): subscribe | subscribePattern | assign
    starting: OffsetSpec
    ending: OffsetSpec
    include_headers: bool
    fail_on_data_loss: bool
    max_offsets_per_trigger: int | None
    min_partitions: int | None
    poll_timeout_ms: int
    batch_size: int
    max_records_per_partition: int | None = None
    api_timeout_ms: int = _API_TIMEOUT_MS
    fetch_retries: int = 3
    fetch_retry_interval_ms: int = 10
    group_id: str = field(default_factory=lambda: f"kheaders-spark-{uuid.uuid4()}")


def source_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Parse and check read options as Spark's connector does.

    Raises ConfigurationError naming the option at fault (also when not exactly one of
    subscribe/subscribePattern/assign is given).
    """
    check_option_names(options.keys(), READ_OPTIONS)
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
        check_batch_bounds(starting, ending)
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
        max_records_per_partition=_positive(options, "maxRecordsPerPartition"),
        api_timeout_ms=api_timeout_ms(options),
        fetch_retries=_non_negative(options, "fetchOffset.numRetries", 3),
        fetch_retry_interval_ms=_non_negative(options, "fetchOffset.retryIntervalMs", 10),
        group_id=conf.get("group.id")
        or f"{_get(options, 'groupIdPrefix') or 'kheaders-spark'}-{uuid.uuid4()}",
    )


def check_batch_bounds(starting: OffsetSpec, ending: OffsetSpec) -> None:
    """Raises ConfigurationError for bounds a batch read cannot have (start at latest, ...)."""
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


# --- the sink ----------------------------------------------------------------------------

# Java's default partitioner hashes keys with murmur2; librdkafka's own default does not.
DEFAULT_PARTITIONER = "murmur2_random"
_TEXT_OR_BYTES = (StringType(), BinaryType())


@dataclass(frozen=True)
class SinkOptions:
    """The parsed write options (picklable: they travel to the executors). The librdkafka
    settings stay out of the repr: they may hold ``sasl.password``."""

    conf: dict[str, str] = field(repr=False)
    topic: str | None
    columns: tuple[str, ...]
    flush_timeout_s: float


def sink_options(options: Mapping[str, str], schema: StructType) -> SinkOptions:
    """Check the options and the DataFrame's columns as Spark's Kafka sink does.

    Raises ConfigurationError naming the column or option at fault.
    """
    check_option_names(options.keys(), WRITE_OPTIONS)
    conf = kafka_config(options, consumer=False)
    conf.setdefault("partitioner", DEFAULT_PARTITIONER)
    topic = _get(options, "topic")
    types = {f.name.lower(): f.dataType for f in schema.fields}
    if "value" not in types:
        raise ConfigurationError("a Kafka write needs a 'value' column (binary or string)")
    checks: dict[str, tuple[DataType, ...]] = {
        "value": _TEXT_OR_BYTES,
        "key": _TEXT_OR_BYTES,
        "topic": (StringType(),),
        "partition": (IntegerType(),),
        "headers": (HEADERS_TYPE,),
        "timestamp": (TimestampType(),),
    }
    for name, allowed in checks.items():
        if name in types and _strip_nullability(types[name]) not in allowed:
            raise ConfigurationError(
                f"column '{name}' must be of type {' or '.join(t.simpleString() for t in allowed)}"
                f", not {types[name].simpleString()}"
            )
    if topic is None and "topic" not in types:
        raise ConfigurationError("a Kafka write needs the 'topic' option or a 'topic' column")
    timeout_ms = int(conf.get("message.timeout.ms", conf.get("delivery.timeout.ms", 300_000)))
    return SinkOptions(
        conf=conf,
        topic=topic,
        columns=tuple(n for n in checks if n in types),
        flush_timeout_s=timeout_ms / 1000 + 30,
    )


def _strip_nullability(dt: DataType) -> DataType:
    """The type with every field and element nullable (a literal array may say not null)."""
    if isinstance(dt, ArrayType):
        return ArrayType(_strip_nullability(dt.elementType), containsNull=True)
    if isinstance(dt, StructType):
        return StructType([StructField(f.name, _strip_nullability(f.dataType)) for f in dt.fields])
    return dt
