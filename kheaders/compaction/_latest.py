"""The KIP-280 fold: keep, per key, the winning record under :class:`CompactionRules`.

:class:`StateTable` is the engine behind :func:`latest` and :class:`LatestState`.  It keeps one
:class:`StateEntry` (a ``__slots__`` object) per key; for the rare key seen in several
partitions it also keeps the winner of each partition, so the result is exactly the
two-stage order of ``kheaders.compaction._rules`` whatever order records arrive in.
Tombstone winners stay in the table (a later, older-versioned record must not bring the key
back) but are not part of the state.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Protocol, TypeAlias, cast

from kheaders._errors import DeserializationError
from kheaders._log import get_logger
from kheaders._model.headers import Headers, received
from kheaders._model.received import message_headers
from kheaders.compaction._rules import CompactionRules, RecordHeaders

_log = get_logger("kheaders.compaction")

Key: TypeAlias = bytes | str
"""A record key as confluent-kafka hands it over (``bytes``; ``str`` after a deserializer)."""

_PARTITION_EOF = -191  # confluent_kafka.KafkaError._PARTITION_EOF


class ConsumedMessage(Protocol):
    """The part of ``confluent_kafka.Message`` compaction reads."""

    def key(self) -> Key | None: ...
    def value(self) -> object: ...
    def headers(self) -> RecordHeaders: ...
    def partition(self) -> int | None: ...
    def offset(self) -> int | None: ...
    def timestamp(self) -> tuple[int, int]: ...
    def error(self) -> object: ...


class StateEntry:
    """The winning record of one key: where it is, its version, and its key/value/headers.

    ``headers`` are as received (a read-only :class:`Headers` view is :meth:`header_view`);
    ``message`` is the consumed message itself when the table keeps messages, else ``None``.
    """

    __slots__ = (
        "headers",
        "key",
        "message",
        "offset",
        "partition",
        "timestamp",
        "value",
        "version",
    )

    key: Key
    value: object
    headers: RecordHeaders
    version: int | None
    timestamp: int
    partition: int
    offset: int
    message: object

    def __init__(  # noqa: PLR0917 (positional on purpose: built once per consumed record)
        self,
        key: Key,
        value: object,
        headers: RecordHeaders,
        version: int | None,
        timestamp: int,
        partition: int,
        offset: int,
        message: object = None,
    ) -> None:
        self.key = key
        self.value = value
        self.headers = headers
        self.version = version
        self.timestamp = timestamp
        self.partition = partition
        self.offset = offset
        self.message = message

    @property
    def tombstone(self) -> bool:
        """True when the value is ``None``."""
        return self.value is None

    def header_view(self) -> Headers:
        """The record's headers as read-only :class:`Headers` (a copy is writable)."""
        h = self.headers
        if type(h) is Headers:
            return h
        items = [] if h is None else h if isinstance(h, list) else list(h)
        return received(items)

    def position(self) -> tuple[int, int]:
        """``(partition, offset)`` of the record."""
        return (self.partition, self.offset)

    def __repr__(self) -> str:
        return (
            f"StateEntry(key={self.key!r}, value={self.value!r}, version={self.version},"
            f" timestamp={self.timestamp}, partition={self.partition}, offset={self.offset})"
        )


@dataclass(slots=True)
class CompactionStats:
    """Counters of one fold.

    ``records`` seen; ``replaced`` (a record beat the key's winner); ``rejected`` (a record
    lost: older under the strategy); ``anomalies`` (comparisons where only one record had a
    version); ``cross_partition_keys`` (keys seen in more than one partition);
    ``undecodable_versions`` (version header present but not decodable); ``unversioned``
    (``header`` strategy, records without a usable version); ``tombstones``; ``keyless``
    (records without key: they cannot be compacted and are skipped, logged); ``errors``
    (error events the consumer delivered instead of records, logged); ``undeserializable``
    (records a kheaders.Consumer could not deserialize: logged, not folded).
    """

    records: int = 0
    replaced: int = 0
    rejected: int = 0
    anomalies: int = 0
    cross_partition_keys: int = 0
    undecodable_versions: int = 0
    unversioned: int = 0
    tombstones: int = 0
    keyless: int = 0
    errors: int = 0
    undeserializable: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counters as a plain dict."""
        return asdict(self)


class StateTable:
    """Per-key winners under ``rules``; feed it with :meth:`offer` or :meth:`offer_message`."""

    __slots__ = ("_multi", "live", "rules", "stats", "table", "topic")

    def __init__(self, rules: CompactionRules, topic: str | None = None) -> None:
        self.rules = rules
        self.topic = topic
        self.table: dict[Key, StateEntry] = {}
        self._multi: dict[Key, dict[int, StateEntry]] = {}
        self.stats = CompactionStats()
        self.live = 0

    def offer_message(self, msg: ConsumedMessage, *, keep_message: bool) -> None:
        """Fold one consumed message (error events and key-less records are counted, logged)."""
        err = msg.error()
        if err is not None:
            code = getattr(err, "code", None)
            if not (callable(code) and code() == _PARTITION_EOF):
                self.stats.errors += 1
                _log.warning("compaction.consumer_error", error=str(err))
            return
        key = msg.key()
        partition = msg.partition()
        offset = msg.offset()
        if key is None or partition is None or offset is None:
            self.stats.records += 1
            self.stats.keyless += 1
            _log.warning(
                "compaction.keyless_record_skipped",
                topic=self.topic,
                partition=partition,
                offset=offset,
            )
            return
        try:
            headers = message_headers(msg)
        except DeserializationError as exc:  # a header key confluent-kafka cannot read
            self.failed(exc)
            return
        ts_type, ts = msg.timestamp()
        self.offer(
            key,
            msg.value(),
            headers,
            partition,
            offset,
            ts if ts_type else -1,
            msg if keep_message else None,
        )

    def failed(self, exc: DeserializationError) -> None:
        """Count (``undeserializable``) and log a record that could not be read; not folded."""
        self.stats.undeserializable += 1
        msg = exc.message
        _log.error(
            "compaction.undeserializable_record",
            topic=self.topic if self.topic is not None else msg.topic(),
            partition=msg.partition(),
            offset=msg.offset(),
            field=exc.field,
            error=str(exc),
        )

    def offer(  # noqa: PLR0917 (positional on purpose: called once per consumed record)
        self,
        key: Key,
        value: object,
        headers: RecordHeaders,
        partition: int,
        offset: int,
        timestamp: int,
        message: object = None,
    ) -> bool:
        """Fold one record; return True when it became its key's winner."""
        stats = self.stats
        stats.records += 1
        rules = self.rules
        version: int | None = None
        if rules.strategy == "header":
            version, bad = rules.lookup(headers)
            if version is None:
                stats.unversioned += 1
                if bad:
                    stats.undecodable_versions += 1
                    _log.warning(
                        "compaction.undecodable_version",
                        topic=self.topic,
                        key=key,
                        partition=partition,
                        offset=offset,
                        header=rules.header,
                        encoding=rules.encoding,
                    )
        if value is None:
            stats.tombstones += 1
        incumbent = self.table.get(key)
        if incumbent is None:
            self.table[key] = StateEntry(
                key, value, headers, version, timestamp, partition, offset, message
            )
            if value is not None:
                self.live += 1
            return True
        if incumbent.partition != partition or key in self._multi:
            entry = StateEntry(key, value, headers, version, timestamp, partition, offset, message)
            return self._offer_multi(key, entry, incumbent)
        if rules.strategy == "header" and (version is None) != (incumbent.version is None):
            stats.anomalies += 1
        if rules.wins(
            (version, timestamp, partition, offset),
            (incumbent.version, incumbent.timestamp, incumbent.partition, incumbent.offset),
        ):
            entry = StateEntry(key, value, headers, version, timestamp, partition, offset, message)
            self._replace(key, entry, incumbent)
            return True
        stats.rejected += 1
        return False

    def _replace(self, key: Key, entry: StateEntry, incumbent: StateEntry) -> None:
        self.table[key] = entry
        self.stats.replaced += 1
        self.live += (entry.value is not None) - (incumbent.value is not None)

    def _offer_multi(self, key: Key, entry: StateEntry, incumbent: StateEntry) -> bool:
        """The slow path: ``key`` lives in several partitions; keep every partition's winner."""
        rules = self.rules
        winners = self._multi.get(key)
        if winners is None:
            winners = self._multi[key] = {incumbent.partition: incumbent}
            self.stats.cross_partition_keys += 1
            _log.warning(
                "compaction.cross_partition_key",
                topic=self.topic,
                key=key,
                partitions=sorted((incumbent.partition, entry.partition)),
                detail="offsets are not comparable across partitions: the partition winners"
                " are compared by version (header strategy), timestamp, then partition",
            )
        old = winners.get(entry.partition)
        if old is not None:
            if rules.strategy == "header" and (entry.version is None) != (old.version is None):
                self.stats.anomalies += 1
            if not rules.wins(_rk(entry), _rk(old)):
                self.stats.rejected += 1
                return False
        winners[entry.partition] = entry
        best = max(winners.values(), key=lambda e: rules.cross_key(_rk(e)))
        if best is not incumbent:
            self._replace(key, best, incumbent)
        if best is entry:
            return True
        self.stats.rejected += 1  # won its partition, but another partition's record is later
        return False

    # -- reading ------------------------------------------------------------------------

    def live_entries(self) -> Iterator[StateEntry]:
        """Winners that are not tombstones, in first-seen key order."""
        return (e for e in self.table.values() if e.value is not None)

    def get_live(self, key: Key) -> StateEntry | None:
        """The key's winner unless absent or a tombstone."""
        e = self.table.get(key)
        return None if e is None or e.value is None else e


def _rk(e: StateEntry) -> tuple[int | None, int, int, int]:
    return (e.version, e.timestamp, e.partition, e.offset)


def latest(
    messages: Iterable[ConsumedMessage],
    *,
    strategy: str | None = "offset",
    header: str | None = None,
    encoding: str = "long",
    stats: CompactionStats | None = None,
) -> dict[Key, ConsumedMessage]:
    """The latest message per key under a KIP-280 strategy; tombstone winners are left out.

    ``messages`` are consumed ``confluent_kafka.Message`` objects (headers as ``Headers``, a
    list of pairs, or ``None``), in any order.  Pass a :class:`CompactionStats` to read the
    counters.  Error events (partition EOF etc.) are skipped; key-less records are counted;
    a record whose headers confluent-kafka cannot read (a non-UTF-8 key) is counted as
    ``undeserializable`` and logged with its offset, not folded.

    >>> from confluent_kafka import Message
    >>> from kheaders.compaction import encode_version
    >>> msgs = [Message(topic="t", partition=0, offset=o, key=b"k", value=v, timestamp=(1, 0),
    ...                 headers=[("version", encode_version(n))])
    ...         for o, (v, n) in enumerate([(b"new", 2), (b"old", 1)])]
    >>> latest(msgs, strategy="header", header="version")[b"k"].value()
    b'new'
    >>> latest(msgs)[b"k"].value()
    b'old'

    Raises ConfigurationError for an unknown strategy or encoding.
    """
    rules = CompactionRules.create(strategy, header=header, encoding=encoding)
    table = StateTable(rules)
    if stats is not None:
        table.stats = stats
    offer = table.offer_message
    for msg in messages:
        offer(msg, keep_message=True)
    return {
        k: cast("ConsumedMessage", e.message) for k, e in table.table.items() if e.value is not None
    }
