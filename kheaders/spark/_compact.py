"""KIP-280 compaction in Spark SQL: the latest record per key, natively, batch or streaming.

The order is the one written down in :mod:`kheaders.compaction._rules` (and followed by
:mod:`kheaders.compaction`): within a partition the greatest *partition key* wins, then the
partition winners of a key are compared by the *cross key*. Both keys become Spark structs
(structs compare field by field, ``false < true``) and ``max_by`` picks the winner, so the
plan holds no Python UDF and works in streaming aggregations (``row_number`` would not).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as sf
from pyspark.sql.types import TimestampNTZType, TimestampType

from kheaders._errors import ConfigurationError
from kheaders.compaction._rules import CompactionRules
from kheaders.spark._functions import header_last
from kheaders.spark._varlong import varlong_parts

_REQUIRED = ("key", "value", "partition", "offset", "timestamp")
_W = "__kheaders_winner"
_RAW = "__kheaders_version_raw"
# Flat order-key columns, computed once per row in one projection (see ``_OrderKeys``).
_HAS, _NONNEG, _BITS, _VER, _TS = (
    "__kheaders_has",
    "__kheaders_nonneg",
    "__kheaders_bits",
    "__kheaders_version",
    "__kheaders_ts",
)
_LO, _HI = "__kheaders_lo", "__kheaders_hi"


def _millis(df: DataFrame) -> Column:
    """Record timestamp in ms since the epoch; ``-1`` when unknown (as the rules read it)."""
    if isinstance(df.schema["timestamp"].dataType, TimestampType | TimestampNTZType):
        ms = sf.unix_millis(sf.col("timestamp").cast("timestamp"))
    else:
        ms = sf.col("timestamp").cast("bigint")
    return sf.coalesce(ms, sf.lit(-1).cast("bigint"))


def _version_columns(raw: Column, rules: CompactionRules) -> list[Column]:
    """The version of a record as flat columns that order like ``(has, version)``.

    For the 8-byte encoding nothing is decoded: 8 big-endian bytes order like the signed
    long they hold once the sign decides first (Spark compares binary as unsigned bytes),
    so the version is ``(has, nonneg, bits)``; a varlong is decoded to ``(has, version)``.
    """
    if rules.encoding == "long":
        has = sf.coalesce(sf.octet_length(raw) == 8, sf.lit(False))
        nonneg = sf.when(has, raw < sf.lit(bytearray(b"\x80"))).otherwise(sf.lit(False))
        bits = sf.when(has, raw).otherwise(sf.lit(bytearray()))
        return [has.alias(_HAS), nonneg.alias(_NONNEG), bits.alias(_BITS)]
    decoded, well_formed = varlong_parts(raw)
    has = sf.coalesce(well_formed, sf.lit(False))
    # 0 for every record without a version (so its offset decides), branch-free: a mask.
    return [has.alias(_HAS), decoded.bitwiseAND(-has.cast("bigint")).alias(_VER)]


def _staged(df: DataFrame, rules: CompactionRules) -> tuple[DataFrame, Column, Column]:
    """``df`` with the order-key columns added, and ``(partition key, cross key)`` over them.

    The keys are structs (compared field by field, ``false < true``, greatest wins) built
    from flat columns inside the aggregations: the rows sorted and shuffled carry only the
    input columns and a few small scalars, never a nested copy of the record.
    """
    ts = _millis(df)
    if rules.strategy == "header":
        staged = df.select("*", header_last("headers", sf.lit(rules.header)).alias(_RAW))
        staged = staged.select(*_inputs(df), *_version_columns(sf.col(_RAW), rules))
        names = [_HAS, _NONNEG, _BITS] if rules.encoding == "long" else [_HAS, _VER]
        version = [sf.col(n).alias(n) for n in names]
        pkey = sf.struct(*version, sf.col("offset").cast("bigint").alias("o"))
        ckey = sf.struct(*version, ts.alias("t"), sf.col("partition").cast("int").alias("p"))
        return staged, pkey, ckey
    staged = df.select(*_inputs(df), ts.alias(_TS))
    cross = sf.struct(sf.col(_TS).alias("t"), sf.col("partition").cast("int").alias("p"))
    if rules.strategy == "timestamp":
        return staged, sf.struct(sf.col(_TS).alias("t"), sf.col("offset").alias("o")), cross
    return staged, sf.struct(sf.col("offset").cast("bigint").alias("o")), cross


def _inputs(df: DataFrame) -> list[Column]:
    return [sf.col(f"`{c}`") for c in df.columns]


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
    keys_in_one_partition: bool = False,
) -> DataFrame:
    """The latest record of every key by the KIP-280 ``strategy``, all input columns kept.

    ``df`` has the kheaders source columns (``key, value, partition, offset, timestamp`` and,
    for the ``header`` strategy, ``headers``); other columns ride along with their record.
    The version of a record is the LAST ``header`` header read as an 8-byte big-endian long
    (``encoding="long"``) or a zigzag varlong (``"varlong"``); one that does not decode
    counts as missing. Records with a NULL key are left out (``kheaders.compaction`` skips
    them too: a compacted topic cannot hold them). A tombstone winner (NULL value) removes
    its key unless ``keep_tombstones`` (then the tombstone itself is returned, which is what
    an update-mode stream must emit so a compacted sink deletes the key).

    Batch frames are hash-partitioned by key once, then aggregated per key and partition,
    then per key (no second shuffle): the exact rule wherever a key may span partitions.
    ``keys_in_one_partition=True`` states that every key lives in one partition (true for
    topics written with Kafka's default partitioner, Java's or librdkafka's, and no explicit
    partitions): then one aggregation by key, partially aggregated before the shuffle like a
    plain ``max_by``, picks the winner, and a key found in two partitions fails the query with
    an error naming it (never a silently different winner).
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
    if keys_in_one_partition and partitions is not None:
        raise ConfigurationError("give either keys_in_one_partition=True or partitions, not both")
    record = sf.struct(*_inputs(df))
    df = df.where(sf.col("key").isNotNull())  # key-less records have no state (as in Python)
    # The order-key columns are computed once per row, in a projection before the sort; the
    # record struct and the key structs are built inside the aggregations (compiled).
    staged, pkey, ckey = _staged(df, rules)
    if keys_in_one_partition:
        winners = _single_stage(staged, record, pkey)
    elif partitions is None:
        winners = _two_stage(staged, record, pkey, ckey)
    else:
        winners = _slotted(staged, record, pkey, ckey, partitions)
    out = winners.select(f"{_W}.*")
    return out if keep_tombstones else out.where(sf.col("value").isNotNull())


def _two_stage(staged: DataFrame, record: Column, pkey: Column, ckey: Column) -> DataFrame:
    """Batch: the winner of every (key, partition), then of every key, after ONE shuffle.

    Rows are hash-partitioned by key once; both aggregations then run without another
    exchange (a distribution by key satisfies the grouping by key and partition).
    """
    per_partition = (
        staged.repartition("key")
        .groupBy("key", "partition")
        .agg(sf.max_by(sf.struct(ckey.alias("c"), record.alias("r")), pkey).alias(_W))
    )
    return per_partition.groupBy("key").agg(
        sf.max_by(sf.col(f"{_W}.r"), sf.col(f"{_W}.c")).alias(_W)
    )


def _single_stage(staged: DataFrame, record: Column, pkey: Column) -> DataFrame:
    """Every key in one partition: the greatest partition key wins, in ONE aggregation.

    The smallest and largest partition of each key ride along (two int buffers); a key seen
    in two partitions raises, because the cross-partition rule was not applied to it.
    """
    part = sf.col("partition")
    grouped = staged.groupBy("key").agg(
        sf.max_by(record, pkey).alias(_W), sf.min(part).alias(_LO), sf.max(part).alias(_HI)
    )
    message = sf.concat(
        sf.lit("compact(keys_in_one_partition=True): key "),
        sf.hex(sf.col("key")),
        sf.lit(" (hex) is in partitions "),
        sf.col(_LO).cast("string"),
        sf.lit(" and "),
        sf.col(_HI).cast("string"),
        sf.lit("; compact without keys_in_one_partition applies the cross-partition rule"),
    )
    spans = sf.coalesce(sf.col(_LO) != sf.col(_HI), sf.lit(False))
    return grouped.select(sf.when(spans, sf.raise_error(message)).otherwise(sf.col(_W)).alias(_W))


def _slotted(
    staged: DataFrame, record: Column, pkey: Column, ckey: Column, partitions: int
) -> DataFrame:
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
    cand = sf.struct(ckey.alias("c"), record.alias("r"))
    slots = [
        sf.max_by(sf.when(checked == p, cand), sf.when(checked == p, pkey))
        for p in range(partitions)
    ]
    found = sf.filter(sf.array(*slots), lambda s: s.isNotNull())
    best = sf.aggregate(
        found,
        sf.try_element_at(found, sf.lit(1)),
        lambda acc, s: sf.when(s["c"] > acc["c"], s).otherwise(acc),
    )
    return staged.groupBy("key").agg(best["r"].alias(_W))
