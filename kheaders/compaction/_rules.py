"""KIP-280 compaction rules: which of two records of the same key is the latest.

This module is the one definition of the comparison; :mod:`kheaders.compaction` (the
client-side view) and the Spark SQL implementation both follow it, and both are tested
against the shared rule table ``tests/data/compaction_cases.json``.

The order, precisely
--------------------
Every record of a key is reduced to a tuple ``(version, timestamp, partition, offset)``:
``version`` is the decoded version header (``header`` strategy only, else ``None``),
``timestamp`` the record timestamp in ms (``-1`` when unknown).  The winner of a key is
chosen in two stages, so the result never depends on the order records are seen in:

1. **Within one partition** (offsets are comparable there) the winner is the record with
   the greatest *partition key*:

   ========== =================================================
   offset     ``(offset)``
   timestamp  ``(timestamp, offset)``
   header     ``(version IS NOT NULL, coalesce(version, 0), offset)``
   ========== =================================================

2. **Across partitions** (the same key in several partitions, a producer-side anomaly that
   is counted and logged) the per-partition winners are compared by the *cross key*:

   ========== ====================================================================
   offset     ``(timestamp, partition)``
   timestamp  ``(timestamp, partition)``
   header     ``(version IS NOT NULL, coalesce(version, 0), timestamp, partition)``
   ========== ====================================================================

   Offsets of different partitions say nothing about order, so they are never compared;
   the partition number is only a deterministic last tie-break.

All comparisons are lexicographic, ``True > False``, greatest wins.  Stage 1 is a total
order (offsets are unique in a partition) and so is stage 2 (one winner per partition).
A single comparison ``wins(a, b)`` (stage 1 when the partitions are equal, else stage 2)
is *not* transitive across partitions, which is why folding code must keep the winner of
every partition for a key seen in more than one (see ``kheaders.compaction``).

A winner whose value is ``None`` (a tombstone) takes part like any record; the key is then
absent from the resulting state.

Versions (``header`` strategy): the LAST header with the configured key counts (Kafka's
``Headers.lastHeader``).  Its value is read as a signed 64-bit long, encoded as 8 bytes
big-endian (``encoding="long"``, Kafka's ``LongSerializer``; the default) or as a zigzag
varlong using every byte (``encoding="varlong"``, what KIP-280's broker patches read).  A
value that does not decode (wrong length, malformed or trailing-byte varlong, null) makes
the record count as having *no* version; it is reported, never raised.  A blank
``compaction.strategy.header`` makes the ``header`` strategy fall back to ``offset``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, Literal, TypeAlias

from kheaders._codec.fixed import INT64
from kheaders._codec.varint import read_varlong, write_varlong
from kheaders._errors import ConfigurationError, DecodeError
from kheaders._log import get_logger
from kheaders._model.headers import Headers

Strategy: TypeAlias = Literal["offset", "timestamp", "header"]
Encoding: TypeAlias = Literal["long", "varlong"]

STRATEGY_CONFIG: Final = "compaction.strategy"
HEADER_CONFIG: Final = "compaction.strategy.header"
ENCODING_CONFIG: Final = "compaction.strategy.header.encoding"

CONFIG_KEYS: Final[tuple[str, ...]] = (STRATEGY_CONFIG, HEADER_CONFIG, ENCODING_CONFIG)

STRATEGIES: Final[tuple[Strategy, ...]] = ("offset", "timestamp", "header")
ENCODINGS: Final[tuple[Encoding, ...]] = ("long", "varlong")

RecordHeaders: TypeAlias = "Headers | Iterable[tuple[str, bytes | None]] | None"
"""Headers as a consumed record carries them: kheaders Headers, confluent pairs, or None."""

RecordKey: TypeAlias = tuple[int | None, int, int, int]
"""What the order looks at: ``(version, timestamp, partition, offset)``."""

_log = get_logger("kheaders.compaction")


class BlankHeaderKeyWarning(UserWarning):
    """The ``header`` strategy was chosen without a header key; ``offset`` is used."""


def decode_long(value: bytes | None) -> int | None:
    """Read 8 bytes big-endian as a signed long; ``None`` for anything else (never raises).

    >>> decode_long((120).to_bytes(8, "big")), decode_long(b"\\x01"), decode_long(None)
    (120, None, None)
    """
    if value is None or len(value) != 8:
        return None
    return INT64.unpack(value)


def decode_varlong(value: bytes | None) -> int | None:
    """Read a zigzag varlong that uses every byte; ``None`` when malformed (never raises).

    >>> decode_varlong(bytes([0xF0, 0x01])), decode_varlong(b"\\xff"), decode_varlong(b"\\x02\\x00")
    (120, None, None)
    """
    if not value:
        return None
    try:
        version, end = read_varlong(value, 0)
    except DecodeError:
        return None
    return version if end == len(value) else None


def encode_version(version: int, encoding: Encoding = "long") -> bytes:
    """Encode ``version`` as the ``header`` strategy reads it.

    >>> encode_version(120).hex(), encode_version(120, "varlong").hex()
    ('0000000000000078', 'f001')

    Raises ValueError outside the signed 64-bit range, ConfigurationError for an unknown
    encoding.
    """
    if encoding == "long":
        try:
            return INT64.write(version)
        except ValueError as exc:
            raise ValueError(f"version {version} is outside the signed 64-bit range") from exc
    if encoding == "varlong":
        return write_varlong(version)
    raise ConfigurationError(
        f"{ENCODING_CONFIG}: unknown version encoding {encoding!r}; use long or varlong"
    )


def _parse_strategy(value: object) -> Strategy:
    if value is None:
        return "offset"
    if not isinstance(value, str):
        raise ConfigurationError(
            f"{STRATEGY_CONFIG} must be a string (offset, timestamp or header), got {value!r}"
        )
    name = value.strip().lower()
    if not name:
        return "offset"
    for known in STRATEGIES:
        if name == known:
            return known
    raise ConfigurationError(
        f"{STRATEGY_CONFIG}: unknown compaction strategy {value!r};"
        " use one of offset, timestamp, header"
    )


def _parse_encoding(value: object) -> Encoding:
    if value is None or (isinstance(value, str) and not value.strip()):
        return "long"
    if isinstance(value, str):
        name = value.strip().lower()
        for known in ENCODINGS:
            if name == known:
                return known
    raise ConfigurationError(
        f"{ENCODING_CONFIG}: unknown version encoding {value!r}; use long or varlong"
    )


@dataclass(frozen=True, slots=True)
class CompactionRules:
    """The KIP-280 comparison for one configuration (see the module docstring for the order).

    Build it with :meth:`create` or :meth:`from_config`; ``strategy`` is the *effective*
    strategy (``offset`` after a blank-header fallback), ``requested`` the one asked for.

    >>> rules = CompactionRules.create("header", header="version")
    >>> v = rules.version_of([("version", encode_version(120))])
    >>> rules.wins((v, 10, 0, 4), (None, 99, 0, 9))
    True
    """

    config_keys: ClassVar[tuple[str, ...]] = CONFIG_KEYS
    """The client settings :meth:`from_config` reads."""

    strategy: Strategy = "offset"
    header: str | None = None
    encoding: Encoding = "long"
    requested: Strategy = "offset"

    @classmethod
    def create(
        cls, strategy: str | None = "offset", *, header: str | None = None, encoding: str = "long"
    ) -> CompactionRules:
        """Rules for ``strategy`` (``offset`` when empty or ``None``).

        A ``header`` strategy with a blank ``header`` falls back to ``offset``, logging a
        warning and issuing :class:`BlankHeaderKeyWarning`.  Raises ConfigurationError for
        an unknown strategy or encoding, naming the setting.
        """
        requested = _parse_strategy(strategy)
        enc = _parse_encoding(encoding)
        if header is not None and not isinstance(header, str):
            raise ConfigurationError(f"{HEADER_CONFIG} must be a string, got {header!r}")
        if requested != "header":
            return cls(requested, header, enc, requested)
        if header is None or not header.strip():
            message = (
                f"{STRATEGY_CONFIG}=header but {HEADER_CONFIG} is blank:"
                " falling back to the offset strategy (KIP-280)"
            )
            _log.warning("compaction.blank_header_key", detail=message)
            warnings.warn(message, BlankHeaderKeyWarning, stacklevel=2)
            return cls("offset", header, enc, requested)
        return cls("header", header, enc, requested)

    @classmethod
    def from_config(cls, config: Mapping[str, object]) -> CompactionRules:
        """Rules from KIP-280 settings: ``compaction.strategy``, ``compaction.strategy.header``
        and (kheaders' own) ``compaction.strategy.header.encoding``; absent means default.

        >>> CompactionRules.from_config({"compaction.strategy": "timestamp"}).strategy
        'timestamp'

        Raises ConfigurationError naming the setting at fault.
        """
        header = config.get(HEADER_CONFIG)
        if header is not None and not isinstance(header, str):
            raise ConfigurationError(f"{HEADER_CONFIG} must be a string, got {header!r}")
        encoding = config.get(ENCODING_CONFIG)
        return cls.create(
            _parse_strategy(config.get(STRATEGY_CONFIG)),
            header=header,
            encoding=_parse_encoding(encoding),
        )

    # -- versions -----------------------------------------------------------------------

    def lookup(self, headers: RecordHeaders) -> tuple[int | None, bool]:
        """``(version, undecodable)`` of a record: the last matching header, decoded.

        ``undecodable`` is True when the header is present but its (last) value does not
        decode; the version is then ``None``.  Always ``(None, False)`` unless the effective
        strategy is ``header``.  Never raises for any header value.
        """
        key = self.header
        if self.strategy != "header" or not headers or key is None:
            return None, False
        if type(headers) is Headers:
            found = headers.last_header(key)
            if found is None:
                return None, False
            raw = found[1]
        else:
            items = headers if isinstance(headers, list | tuple) else list(headers)
            for item in reversed(items):
                if item[0] == key:
                    raw = item[1]
                    break
            else:
                return None, False
        version = decode_long(raw) if self.encoding == "long" else decode_varlong(raw)
        return version, version is None

    def version_of(self, headers: RecordHeaders) -> int | None:
        """The record's version under these rules, or ``None`` (absent or undecodable)."""
        return self.lookup(headers)[0]

    # -- the order ----------------------------------------------------------------------

    def wins(self, candidate: RecordKey, incumbent: RecordKey) -> bool:
        """True when ``candidate`` is later than ``incumbent``; both ``(version, timestamp,
        partition, offset)``.

        Same partition: the stage-1 key decides; different partitions: the stage-2 key (see
        the module docstring).  Never True for equal tuples.
        """
        cv, ct, cp, co = candidate
        iv, it, ip, io = incumbent
        if self.strategy == "header":
            if cv is None:
                if iv is not None:
                    return False
            elif iv is None:
                return True
            elif cv != iv:
                return cv > iv
        if cp == ip:
            if self.strategy == "timestamp" and ct != it:
                return ct > it
            return co > io
        if ct != it:
            return ct > it
        return cp > ip

    def partition_key(self, record: RecordKey) -> tuple[int, ...]:
        """The stage-1 sort key (greatest wins within one partition) of a record key."""
        version, timestamp, _partition, offset = record
        if self.strategy == "header":
            return (0, 0, offset) if version is None else (1, version, offset)
        if self.strategy == "timestamp":
            return (timestamp, offset)
        return (offset,)

    def cross_key(self, record: RecordKey) -> tuple[int, ...]:
        """The stage-2 sort key (greatest wins among partition winners) of a record key."""
        version, timestamp, partition, _offset = record
        if self.strategy == "header":
            if version is None:
                return (0, 0, timestamp, partition)
            return (1, version, timestamp, partition)
        return (timestamp, partition)
