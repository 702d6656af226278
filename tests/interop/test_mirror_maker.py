"""MirrorMaker 2 (Kafka's connect-mirror 4.3, the dedicated driver as it ships) beside
``kheaders mirror``, copying the same records from the suite's cluster (A) to a second one (B).

Both run as processes of their own, one after the other, so each one's CPU time is its own.
The table in docs/mirror.md ("Beside MirrorMaker 2") points at these tests; the figures it
quotes are the ``mirror-maker-figures`` line this module prints.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from kheaders.broker import create_topic
from tests.interop.jvm import Header, Jvm, mirror_maker_classpath
from tests.support.brokers import local_broker

pytestmark = pytest.mark.integration

DAY_MS = 86_400_000
BULK = 20_000
OWN: list[Header] = [("dup", b"1"), ("nul", None), ("empty", b""), ("dup", b"2"), ("clé", b"\xff")]


Record = tuple[int, int, bytes | None, bytes | None, list[Header], tuple[int, int]]


@dataclass
class Copy:
    """One tool's run: what arrived on B, and what the run cost."""

    records: list[Record]  # (partition, offset, key, value, headers, timestamp)
    wall: float  # the process's start to the last record on B
    copying: float  # first record on B to the last
    cpu: float  # the process's user + system seconds


@dataclass
class Runs:
    topic: str
    source: list[Record]
    kheaders: Copy
    mm2: Copy
    cluster_a: str


def _reader(bootstrap: str, topic: str, partitions: int) -> Consumer:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"mm-{uuid.uuid4().hex[:6]}"})
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    return c


def _read_all(
    bootstrap: str, topic: str, total: int, proc: subprocess.Popen[bytes] | None = None
) -> tuple[list[Record], float]:
    """Every record of ``topic`` once ``total`` are there, and when the first came.

    With ``proc``, the copier: the wait ends at once if it exits.
    """
    deadline = time.monotonic() + 240
    while True:  # the copier may create the topic
        meta = Consumer({"bootstrap.servers": bootstrap, "group.id": "meta"})
        found = meta.list_topics(topic, timeout=10).topics.get(topic)
        meta.close()
        if found is not None and found.error is None and found.partitions:
            break
        assert proc is None or proc.poll() is None, f"the copier exited {proc.returncode}"
        assert time.monotonic() < deadline, f"{topic} never appeared"
        time.sleep(0.2)
    reader = _reader(bootstrap, topic, len(found.partitions))
    records: list[Record] = []
    first = 0.0
    try:
        while len(records) < total and time.monotonic() < deadline:
            assert proc is None or proc.poll() is None, f"the copier exited {proc.returncode}"
            for m in reader.consume(2000, 0.5):
                if m.error() is None:
                    first = first or time.monotonic()
                    raw = m.headers() or []
                    assert isinstance(raw, list)
                    headers: list[Header] = [
                        (k, v.encode() if isinstance(v, str) else v) for k, v in raw
                    ]
                    records.append(
                        (m.partition() or 0, m.offset() or 0, m.key(), m.value(), headers,
                         m.timestamp())
                    )  # fmt: skip
    finally:
        reader.close()
    assert len(records) == total, f"{len(records)} of {total} records in {topic}"
    return records, first


def _copied(proc: subprocess.Popen[bytes], bootstrap: str, topic: str, total: int) -> Copy:
    """Wait for ``total`` records in ``topic`` on B, then stop the copier and take its cost."""
    started = time.monotonic()
    records, first = _read_all(bootstrap, topic, total, proc)
    done = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = status
    return Copy(records, done - started, done - first, usage.ru_utime + usage.ru_stime)


@pytest.fixture(scope="module")
def runs(jvm: Jvm, bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    classpath = mirror_maker_classpath()
    b = local_broker(cluster="kheaders-mm2-bbb").start()
    try:
        topic = create_topic(bootstrap, f"mm2-{uuid.uuid4().hex[:8]}", partitions=2)
        create_topic(b.bootstrap, topic, partitions=2)  # kheaders mirror keeps the name
        create_topic(bootstrap, topic + "-dlt")  # its dead letters go back to the source
        old = int(time.time() * 1000) - DAY_MS
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
        own: list[tuple[str, str | bytes | None]] = list(OWN)
        for i in range(6):  # the records whose every byte is compared
            producer.produce(topic, f"v{i}".encode(), f"k{i}".encode(), partition=i % 2,
                             headers=own, timestamp=old + i)  # fmt: skip
        body = bytes(100)
        for i in range(BULK):
            producer.produce(topic, body, b"%d" % i, partition=i % 2,
                             headers=[("a", b"1"), ("b", b"2"), ("c", None)])  # fmt: skip
            if i % 1000 == 0:
                producer.poll(0)
        assert producer.flush(60) == 0
        total = 6 + BULK
        source, _ = _read_all(bootstrap, topic, total)

        mirror = subprocess.Popen(
            [sys.executable, "-m", "kheaders.cli", "mirror", "--source", bootstrap,
             "--target", b.bootstrap, "--topic", topic, "--group", f"{topic}-kheaders",
             "--source-name", "A", "--target-name", "B"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        ours = _copied(mirror, b.bootstrap, topic, total)

        config = tmp_path_factory.mktemp("mm2") / "mm2.properties"
        config.write_text(_mm2_properties(bootstrap, b.bootstrap, topic))
        mm2 = subprocess.Popen(
            ["java", "-Xmx512m", "-cp", classpath, "org.apache.kafka.connect.mirror.MirrorMaker",
             str(config)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        theirs = _copied(mm2, b.bootstrap, f"A.{topic}", total)
        print(
            f"mirror-maker-figures records={total} "
            f"kheaders: {total / ours.copying:.0f}/s copying, {ours.wall:.1f} s wall, "
            f"{ours.cpu:.1f} s CPU; MirrorMaker 2: {total / theirs.copying:.0f}/s copying, "
            f"{theirs.wall:.1f} s wall, {theirs.cpu:.1f} s CPU"
        )
        yield Runs(topic, source, ours, theirs, bootstrap)
    finally:
        b.stop()


def _mm2_properties(a: str, b: str, topic: str) -> str:
    lines = [
        "clusters = A, B",
        f"A.bootstrap.servers = {a}",
        f"B.bootstrap.servers = {b}",
        "A->B.enabled = true",
        f"A->B.topics = {topic}",
        "B->A.enabled = false",
        "replication.factor = 1",
        "checkpoints.topic.replication.factor = 1",
        "heartbeats.topic.replication.factor = 1",
        "offset-syncs.topic.replication.factor = 1",
        "offset.storage.replication.factor = 1",
        "status.storage.replication.factor = 1",
        "config.storage.replication.factor = 1",
        "sync.topic.acls.enabled = false",
        "refresh.topics.interval.seconds = 1",
        "emit.checkpoints.interval.seconds = 1",
    ]
    return "\n".join(lines) + "\n"


def _by_key(records: list[Record]) -> dict[bytes | None, Record]:
    return {r[2]: r for r in records}


def test_each_copies_every_record_once(runs: Runs) -> None:
    want = sorted((r[0], r[2]) for r in runs.source)
    for copy in (runs.kheaders, runs.mm2):
        assert sorted((r[0], r[2]) for r in copy.records) == want


def test_both_keep_key_value_timestamp_partition_and_the_records_own_headers(runs: Runs) -> None:
    source = _by_key(runs.source)
    for copy in (runs.kheaders, runs.mm2):
        got = _by_key(copy.records)
        for i in range(6):
            key = f"k{i}".encode()
            partition, _, _, value, headers, stamp = got[key]
            s_partition, _, _, s_value, _, s_stamp = source[key]
            assert (partition, value, stamp) == (s_partition, s_value, s_stamp)
            assert stamp[1] < time.time() * 1000 - DAY_MS / 2  # the day-old time, kept
            assert headers[: len(OWN)] == OWN


def test_provenance_mirror_maker_renames_the_topic_kheaders_adds_headers(runs: Runs) -> None:
    source = _by_key(runs.source)
    mm2 = _by_key(runs.mm2.records)
    ours = _by_key(runs.kheaders.records)
    for i in range(6):
        key = f"k{i}".encode()
        # MirrorMaker 2: the record's headers exactly; its origin is the topic's name (A.<topic>,
        # DefaultReplicationPolicy) and its offset-syncs topic, not the record
        assert mm2[key][4] == OWN
        # kheaders: the same topic name; the origin and the path travel with the record
        partition, offset = source[key][0], source[key][1]
        assert ours[key][4][len(OWN) :] == [
            ("kheaders.origin.cluster", b"A"),
            ("kheaders.origin.topic", runs.topic.encode()),
            ("kheaders.origin.partition", str(partition).encode()),
            ("kheaders.origin.offset", str(offset).encode()),
            ("kheaders.hops", b"A,B"),
        ]
