"""KIP-280 compaction in Spark SQL: the latest record per key, natively, batch or streaming.

The order is the one written down in :mod:`kheaders._compaction_rules` (and followed by
:mod:`kheaders.compaction`): within a partition the greatest *partition key* wins, then the
partition winners of a key are compared by the *cross key*. Both keys become Spark structs
(structs compare field by field, ``false < true``) and ``max_by`` picks the winner, so the
plan holds no Python UDF and works in streaming aggregations (``row_number`` would not).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as sf
from pyspark.sql.types import TimestampNTZType, TimestampType

from kheaders._compaction_rules import CompactionRules
from kheaders._errors import ConfigurationError
from kheaders.spark._functions import _long_of, _varlong_of, header_last

_REQUIRED = ("key", "value", "partition", "offset", "timestamp")
_W = "__kheaders_winner"


def _millis(df: DataFrame) -> Column:
    """Record timestamp in ms since the epoch; ``-1`` when unknown (as the rules read it)."""
    if isinstance(df.schema["timestamp"].dataType, TimestampType | TimestampNTZType):
        ms = sf.unix_millis(sf.col("timestamp").cast("timestamp"))
    else:
        ms = sf.col("timestamp").cast("bigint")
    return sf.coalesce(ms, sf.lit(-1).cast("bigint"))


def _order_keys(df: DataFrame, rules: CompactionRules) -> tuple[Column, Column]:
    """``(partition key, cross key)`` of every record as Spark structs (greatest wins)."""
    ts = _millis(df)
    partition = sf.col("partition").cast("int")
    offset = sf.col("offset").cast("bigint")
    if rules.strategy == "header":
        raw = header_last("headers", sf.lit(rules.header))
        version = _long_of(raw) if rules.encoding == "long" else _varlong_of(raw)
        has = version.isNotNull()
        v = sf.coalesce(version, sf.lit(0).cast("bigint"))
        return (
            sf.struct(has.alias("h"), v.alias("v"), offset.alias("o")),
            sf.struct(has.alias("h"), v.alias("v"), ts.alias("t"), partition.alias("p")),
        )
    cross = sf.struct(ts.alias("t"), partition.alias("p"))
    if rules.strategy == "timestamp":
        return sf.struct(ts.alias("t"), offset.alias("o")), cross
    return sf.struct(offset.alias("o")), cross


def _check_columns(df: DataFrame, rules: CompactionRules) -> None:
    needed = [*_REQUIRED, "headers"] if rules.strategy == "header" else list(_REQUIRED)
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ConfigurationError(
            f"compact() needs the columns {', '.join(needed)} (the kheaders source schema);"
            f" missing: {', '.join(missing)}"
        )


def compact(
    df: DataFrame,
    strategy: str | None = "offset",
    header: str | None = None,
    encoding: str = "long",
    *,
    partitions: int | None = None,
    keep_tombstones: bool = False,
) -> DataFrame:
    """The latest record of every key by the KIP-280 ``strategy``, all input columns kept.

    ``df`` has the kheaders source columns (``key, value, partition, offset, timestamp`` and,
    for the ``header`` strategy, ``headers``); other columns ride along with their record.
    The version of a record is the LAST ``header`` header read as an 8-byte big-endian long
    (``encoding="long"``) or a zigzag varlong (``"varlong"``); one that does not decode
    counts as missing. A tombstone winner (NULL value) removes its key unless
    ``keep_tombstones`` (then the tombstone itself is returned, which is what an update-mode
    stream must emit so a compacted sink deletes the key).

    Batch frames are compacted in two aggregations (per key and partition, then per key).
    Streaming frames need ``partitions`` (the topic's partition count): the winners of each
    partition are kept in one aggregation of ``partitions`` slots, so the query runs with
    ``outputMode("update")``; a record of a partition outside ``0..partitions-1`` fails the
    query with an error naming it. ``partitions`` may be given for batch frames too.

    Raises ConfigurationError for an unknown strategy or encoding, a missing column, or a
    streaming frame without ``partitions``; a blank ``header`` falls back to ``offset``.
    """
    rules = CompactionRules.create(strategy, header=header, encoding=encoding)
    _check_columns(df, rules)
    if partitions is not None and (isinstance(partitions, bool) or partitions < 1):
        raise ConfigurationError(f"partitions must be a positive int, got {partitions!r}")
    if df.isStreaming and partitions is None:
        raise ConfigurationError(
            "compact() on a streaming DataFrame needs partitions=<the topic's partition count>"
        )
    pkey, ckey = _order_keys(df, rules)
    record = sf.struct(*[sf.col(f"`{c}`") for c in df.columns])
    candidate = sf.struct(ckey.alias("c"), record.alias("r"))
    if partitions is None:
        per_partition = df.groupBy("key", "partition").agg(sf.max_by(candidate, pkey).alias(_W))
        winners = per_partition.groupBy("key").agg(
            sf.max_by(sf.col(f"{_W}.r"), sf.col(f"{_W}.c")).alias(_W)
        )
    else:
        winners = _slotted(df, pkey, candidate, partitions)
    out = winners.select(f"{_W}.*")
    return out if keep_tombstones else out.where(sf.col("value").isNotNull())


def _slotted(df: DataFrame, pkey: Column, candidate: Column, partitions: int) -> DataFrame:
    """One aggregation: a ``max_by`` slot per partition, then the greatest cross key."""
    part = sf.col("partition")
    bad = part.isNull() | (part < 0) | (part >= partitions)
    message = sf.concat(
        sf.lit("compact(partitions="),
        sf.lit(str(partitions)),
        sf.lit("): record of key "),
        sf.coalesce(sf.hex(sf.col("key")), sf.lit("NULL")),
        sf.lit(" (hex) is in partition "),
        sf.coalesce(part.cast("string"), sf.lit("NULL")),
        sf.lit(", offset "),
        sf.col("offset").cast("string"),
    )
    checked = sf.when(bad, sf.raise_error(message)).otherwise(part)
    slots = [
        sf.max_by(sf.when(checked == p, candidate), sf.when(checked == p, pkey))
        for p in range(partitions)
    ]
    found = sf.filter(sf.array(*slots), lambda s: s.isNotNull())
    best = sf.aggregate(
        found,
        sf.try_element_at(found, sf.lit(1)),
        lambda acc, s: sf.when(s["c"] > acc["c"], s).otherwise(acc),
    )
    return df.groupBy("key").agg(best["r"].alias(_W))
