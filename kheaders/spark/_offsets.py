"""Driver side of the source: which topic-partitions, which offsets, and how ranges are split."""

from __future__ import annotations

import itertools
import math
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from pyspark.sql.datasource import InputPartition

from kheaders._client.reach import scrubbed
from kheaders._errors import BrokerUnavailableError, ConfigurationError
from kheaders.spark._clientlog import ClientLog, client_conf
from kheaders.spark._errors import DataLossError, TopicNotFoundError
from kheaders.spark._options import (
    API_TIMEOUT,
    EARLIEST,
    LATEST,
    OffsetSpec,
    SourceOptions,
    parse_assign,
)

TP = tuple[str, int]
Offsets = dict[TP, int]

_PROBE_S = 5.0
# librdkafka's answers when no broker could be reached in time.
_UNREACHABLE = (
    KafkaError._TRANSPORT,
    KafkaError._TIMED_OUT,
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._RESOLVE,
)


class OffsetRange(InputPartition):
    """One task's work: offsets [start, end) of one topic-partition."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"OffsetRange({self.topic}-{self.partition} [{self.start}, {self.end}))"


def to_json(offsets: Offsets) -> dict[str, dict[str, int]]:
    """Offsets in the form of Spark's connector: ``{"topic": {"0": next_offset}}``."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def from_json(raw: Mapping[str, Mapping[str, int]]) -> Offsets:
    """Parse the checkpointed form of :func:`to_json`."""
    return {(t, int(p)): int(o) for t, parts in raw.items() for p, o in parts.items()}


class OffsetReader:
    """Driver-side metadata and watermark lookups over one lazily created consumer."""

    def __init__(self, options: SourceOptions) -> None:
        self._options = options
        self._consumer: Consumer | None = None
        self._clientlog = ClientLog("driver")
        self._timeout_s = options.api_timeout_ms / 1000

    def _client(self) -> Consumer:
        if self._consumer is None:
            conf: dict[str, object] = {
                **client_conf(self._options.conf, "driver"),
                "logger": self._clientlog,
                "group.id": self._options.group_id,
                "enable.auto.commit": False,
                "auto.offset.reset": "latest",
                "fetch.wait.max.ms": 10,
            }
            self._consumer = Consumer(conf)
        return self._consumer

    def close(self) -> None:
        """Close the consumer, if one was opened."""
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def _unreachable(self, exc: KafkaException, doing: str) -> BrokerUnavailableError | None:
        """The error to raise when ``exc`` says no broker answered, else None."""
        err = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
        if err is None or err.code() not in _UNREACHABLE:
            return None
        if self._consumer is not None:
            self._consumer.poll(0)  # serves librdkafka's queued log lines to the ClientLog
        last = self._clientlog.last_error
        text = (
            f"Kafka at bootstrap servers '{self._options.conf.get('bootstrap.servers')}' did not "
            f"answer {doing} within {self._options.api_timeout_ms} ms (option "
            f"'kafka.{API_TIMEOUT}'): {err.str()}" + (f"; client log: {last}" if last else "")
        )
        return BrokerUnavailableError(scrubbed(text, self._options.conf))

    def _metadata(self) -> object:
        try:
            return self._client().list_topics(timeout=self._timeout_s)
        except KafkaException as exc:
            unreachable = self._unreachable(exc, "a metadata request")
            if unreachable is not None:
                raise unreachable from exc
            raise

    def topic_partitions(self, *, strict: bool = False) -> list[TP]:
        """The partitions the subscription names now (sorted).

        ``strict`` (batch reads): a ``subscribe`` topic missing from the cluster is an error,
        as in Spark's connector; an ``assign`` partition that does not exist always is.
        Raises TopicNotFoundError naming the topic (and partition), ConfigurationError when
        ``subscribePattern`` is not a valid regex, BrokerUnavailableError naming the
        bootstrap servers when no broker answers within ``kafka.default.api.timeout.ms``.
        """
        kind, value = self._options.subscription
        metadata: Any = self._metadata()
        if kind == "assign":
            assigned = sorted(set(parse_assign(value)))
            for topic, partition in assigned:
                info = metadata.topics.get(topic)
                if info is None or info.error is not None:
                    raise TopicNotFoundError(
                        f"option 'assign': topic '{topic}' (partition {partition}) does not "
                        "exist in the cluster"
                    )
                if partition not in info.partitions:
                    raise TopicNotFoundError(
                        f"option 'assign': partition {partition} of topic '{topic}' does not "
                        f"exist (the topic has {len(info.partitions)} partitions)"
                    )
            return assigned
        if kind == "subscribe":
            wanted = {t.strip() for t in value.split(",") if t.strip()}
            topics = [t for t in metadata.topics if t in wanted]
            missing = sorted(
                t for t in wanted if t not in metadata.topics or metadata.topics[t].error
            )
            if strict and missing:
                raise TopicNotFoundError(
                    f"option 'subscribe': topic {', '.join(repr(t) for t in missing)} does not "
                    "exist in the cluster"
                )
        else:
            try:
                pattern = re.compile(value)
            except re.error as exc:
                raise ConfigurationError(
                    f"option 'subscribePattern' is not a regex: {exc}"
                ) from exc
            topics = [t for t in metadata.topics if pattern.fullmatch(t)]
        return sorted(
            (t, p)
            for t in topics
            if metadata.topics[t].error is None
            for p in metadata.topics[t].partitions
        )

    def watermarks(self, tps: Iterable[TP]) -> dict[TP, tuple[int, int]]:
        """(log start, high watermark) per partition.

        The high watermark is the larger of the ListOffsets answer and the one a fetch reports:
        some brokers (Tansu 0.6) answer ListOffsets with the last batch's base offset + 1.
        Raises KafkaException when the broker does not answer in time.
        """
        tps = list(tps)
        if not tps:
            return {}
        client = self._client()
        lows = self._list_offsets(client, tps, EARLIEST)
        highs = self._list_offsets(client, tps, LATEST)
        listed = {
            (lo.topic, lo.partition): (lo.offset, hi.offset)
            for lo, hi in zip(lows, highs, strict=True)
        }
        return self._probe(client, listed)

    def _list_offsets(self, client: Consumer, tps: list[TP], which: int) -> list[TopicPartition]:
        """ListOffsets, retried ``fetchOffset.numRetries`` times ``fetchOffset.retryIntervalMs``
        apart (as Spark's connector) unless no broker answers at all."""
        attempts = self._options.fetch_retries + 1
        for attempt in range(attempts):
            try:
                answer = client.offsets_for_times(
                    [TopicPartition(t, p, which) for t, p in tps], timeout=self._timeout_s
                )
                for tp in answer:
                    if tp.error is not None:
                        raise KafkaException(tp.error)
                return list(answer)
            except KafkaException as exc:
                unreachable = self._unreachable(exc, "an offsets request")
                if unreachable is not None:
                    raise unreachable from exc
                if attempt + 1 == attempts:
                    raise
                time.sleep(self._options.fetch_retry_interval_ms / 1000)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _probe(client: Consumer, listed: dict[TP, tuple[int, int]]) -> dict[TP, tuple[int, int]]:
        client.assign([TopicPartition(t, p, high) for (t, p), (_, high) in listed.items()])
        result = dict(listed)
        pending = set(listed)
        deadline = time.monotonic() + _PROBE_S
        try:
            while pending and time.monotonic() < deadline:
                client.consume(num_messages=1000, timeout=0.02)
                for tp in list(pending):
                    _, fetched = client.get_watermark_offsets(TopicPartition(*tp), cached=True)
                    if fetched >= 0:
                        low, high = listed[tp]
                        result[tp] = (low, max(high, fetched))
                        pending.discard(tp)
        finally:
            client.unassign()
        return result


def resolve(
    spec: OffsetSpec,
    marks: Mapping[TP, tuple[int, int]],
    name: str,
) -> Offsets:
    """Turn an offset spec into an offset per partition of ``marks``.

    Raises ConfigurationError when a JSON spec does not name exactly the subscribed partitions.
    """
    if spec == "earliest":
        return {tp: low for tp, (low, _) in marks.items()}
    if spec == "latest" or isinstance(spec, str):
        return {tp: high for tp, (_, high) in marks.items()}
    given = {(t, p): o for t, parts in spec.items() for p, o in parts.items()}
    if set(given) != set(marks):
        raise ConfigurationError(
            f"if {name} contains specific offsets, it must name every subscribed partition "
            f"(-1 for latest, -2 for earliest); given {sorted(given)}, subscribed {sorted(marks)}"
        )
    out: Offsets = {}
    for tp, offset in given.items():
        low, high = marks[tp]
        out[tp] = low if offset == EARLIEST else high if offset == LATEST else offset
    return out


def check_batch_range(start: Offsets, end: Offsets, marks: Mapping[TP, tuple[int, int]]) -> None:
    """Fail as Spark's connector does when a batch range cannot be read as asked.

    Raises DataLossError when a starting offset is past the end of the log (the topic was
    damaged or recreated, or the offsets belong to another cluster), ConfigurationError when
    it is past the partition's ending offset.
    """
    for tp, offset in sorted(start.items()):
        high = marks[tp][1]
        if offset > high:
            raise DataLossError(
                f"startingOffsets: offset {offset} of {tp[0]}-{tp[1]} is past the end of the "
                f"log (latest offset {high}): the Kafka topic may have been damaged or "
                "recreated, or the offsets belong to another cluster"
            )
        if offset > end[tp]:
            raise ConfigurationError(
                f"startingOffsets: offset {offset} of {tp[0]}-{tp[1]} is after its "
                f"endingOffsets {end[tp]}"
            )


def check_start(
    start: Offsets, marks: Mapping[TP, tuple[int, int]], fail_on_data_loss: bool
) -> Offsets:
    """Move starts below the log start up to it (data loss) or raise.

    Raises DataLossError when ``fail_on_data_loss`` and an offset is below its log start.
    """
    out = dict(start)
    for tp, offset in start.items():
        low = marks[tp][0] if tp in marks else offset
        if offset < low:
            if fail_on_data_loss:
                raise DataLossError(
                    f"offsets [{offset}, {low}) of {tp[0]}-{tp[1]} are no longer available "
                    "(retention or deletion); set failOnDataLoss=false to skip them"
                )
            out[tp] = low
    return out


def split(
    ranges: list[OffsetRange], min_partitions: int | None, max_records: int | None = None
) -> list[OffsetRange]:
    """Drop empty ranges; split large ones so there are about ``min_partitions`` tasks and
    no task reads more than ``max_records`` offsets (Spark's ``maxRecordsPerPartition``)."""
    ranges = [r for r in ranges if r.end > r.start]
    if min_partitions and len(ranges) < min_partitions:
        ranges = _split_to(ranges, min_partitions)
    if max_records:
        ranges = [
            OffsetRange(r.topic, r.partition, a, min(a + max_records, r.end))
            for r in ranges
            for a in range(r.start, r.end, max_records)
        ]
    return ranges


def _split_to(ranges: list[OffsetRange], min_partitions: int) -> list[OffsetRange]:
    total = sum(r.end - r.start for r in ranges)
    out: list[OffsetRange] = []
    for r in ranges:
        size = r.end - r.start
        parts = min(size, max(1, round(size / total * min_partitions)))
        bounds = [r.start + size * i // parts for i in range(parts + 1)]
        out.extend(OffsetRange(r.topic, r.partition, a, b) for a, b in itertools.pairwise(bounds))
    return out


def rate_limit(start: Offsets, end: Offsets, max_rows: int) -> Offsets:
    """Cap the total offsets from ``start`` to ``end`` at ``max_rows``, split proportionally.

    Each partition gets its share of the limit rounded down; the rest goes to the largest
    remainders, so the total never exceeds ``max_rows`` and every trigger makes progress.
    """
    sizes = {tp: max(0, e - start.get(tp, e)) for tp, e in end.items()}
    total = sum(sizes.values())
    if total <= max_rows:
        return dict(end)
    shares = {tp: max_rows * size / total for tp, size in sizes.items()}
    take = {tp: math.floor(s) for tp, s in shares.items()}
    left = max_rows - sum(take.values())
    for tp in sorted(shares, key=lambda k: (take[k] - shares[k], k))[:left]:
        take[tp] += 1
    return {tp: start.get(tp, e) + min(take[tp], sizes[tp]) for tp, e in end.items()}
