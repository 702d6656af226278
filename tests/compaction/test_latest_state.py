"""LatestState, write_state and check_topic against a real broker (KIP-280 on the client side)."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer

import kheaders
from kheaders import BrokerUnavailableError, ConfigurationError
from kheaders.compaction import LatestState, check_topic, encode_version, write_state
from kheaders.interceptors.versioning import VersionStampInterceptor

pytestmark = pytest.mark.integration


def _producer(bootstrap: str) -> Producer:
    """One record per batch: the embedded broker's high watermark is the last batch's base
    offset + 1 (FIELD-NOTES), and catching up stops at the high watermark."""
    return Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 1})


def _assign_consumer(bootstrap: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"latest-state-test-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
        }
    )


def _send(
    producer: Producer,
    topic: str,
    key: bytes,
    value: bytes | None,
    version: int | None = None,
    partition: int = 0,
) -> None:
    headers = None if version is None else [("version", encode_version(version))]
    producer.produce(topic, value=value, key=key, headers=headers, partition=partition)
    producer.flush(10)


def test_latest_state_is_a_mapping_of_the_latest_value_per_key(bootstrap: str, topic: str) -> None:
    p = _producer(bootstrap)
    for key, value in [(b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"c", b"1"), (b"c", None)]:
        _send(p, topic, key, value)
    with LatestState(topic, config={"bootstrap.servers": bootstrap}) as state:
        assert state.run_until_caught_up(30)
        assert dict(state.as_dict()) == {b"a": b"2", b"b": b"1"}
        assert len(state) == 2
        assert sorted(state) == [b"a", b"b"]
        assert b"c" not in state
        assert state.get(b"c") is None
        assert state[b"a"].offset == 2
        with pytest.raises(KeyError):
            state[b"c"]
        s = state.stats
        assert (s.records, s.replaced, s.rejected, s.tombstones) == (5, 2, 0, 1)
        assert state.positions() == {0: 5}


def test_header_strategy_counts_rejections_anomalies_and_undecodable_versions(
    bootstrap: str, topic: str
) -> None:
    p = _producer(bootstrap)
    _send(p, topic, b"k", b"v5", 5)
    _send(p, topic, b"k", b"v3", 3)  # rejected: older
    _send(p, topic, b"k", b"none")  # rejected: anomalous, no version
    p.produce(topic, key=b"k", value=b"bad", headers=[("version", b"\x01")])
    _send(p, topic, b"k", b"v7", 7)  # replaces
    consumer = _assign_consumer(bootstrap)
    try:
        state = LatestState(topic, consumer, strategy="header", header="version")
        assert state.run_until_caught_up(30)
        assert state[b"k"].value == b"v7"
        assert state[b"k"].version == 7
        s = state.stats
        assert (s.records, s.replaced, s.rejected) == (5, 1, 3)
        assert (s.anomalies, s.undecodable_versions, s.unversioned) == (2, 1, 2)
    finally:
        consumer.close()


def test_start_offsets_snapshot_resumes_where_an_earlier_state_stopped(
    bootstrap: str, topic: str
) -> None:
    p = _producer(bootstrap)
    _send(p, topic, b"a", b"1")
    _send(p, topic, b"b", b"1")
    with LatestState(topic, config={"bootstrap.servers": bootstrap}) as first:
        assert first.run_until_caught_up(30)
        snapshot = first.positions()
    _send(p, topic, b"c", b"1")
    with LatestState(
        topic, config={"bootstrap.servers": bootstrap}, start_offsets=snapshot
    ) as later:
        assert later.run_until_caught_up(30)
        assert later.as_dict() == {b"c": b"1"}
        assert later.stats.records == 1


def test_background_thread_keeps_the_state_current(bootstrap: str, topic: str) -> None:
    p = _producer(bootstrap)
    _send(p, topic, b"k", b"1")
    state = LatestState(topic, config={"bootstrap.servers": bootstrap}).start(poll_timeout=0.1)
    try:
        with pytest.raises(RuntimeError, match="background"):
            state.poll_once(0)
        _send(p, topic, b"k", b"2")
        _send(p, topic, b"j", b"1")
        deadline = time.monotonic() + 30
        while state.as_dict() != {b"k": b"2", b"j": b"1"} and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state.as_dict() == {b"k": b"2", b"j": b"1"}
    finally:
        state.close()


def test_missing_topic_or_consumer_is_reported(bootstrap: str) -> None:
    with pytest.raises(ConfigurationError, match=r"bootstrap\.servers"):
        LatestState("whatever")
    with pytest.raises(BrokerUnavailableError, match="no-such-topic"):
        LatestState(
            f"no-such-topic-{uuid.uuid4().hex}",
            config={"bootstrap.servers": bootstrap, "allow.auto.create.topics": False},
        )


def test_out_of_order_versions_from_several_producers_end_to_end(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    """Header strategy keeps the highest version; offset strategy over the same topic keeps
    what arrived last (stale); write_state copies the state and check_topic agrees."""
    topic = topic_factory(partitions=2)
    keys = [f"key-{i}".encode() for i in range(12)]
    versions = range(1, 7)
    rng = random.Random(280)
    # Phase 1 carries the highest version of the even keys, phase 2 everything else, so
    # for those keys the record at the highest offset is stale by construction.
    phase1 = [(k, 6) for k in keys[::2]]
    phase2 = [(k, v) for k in keys for v in versions if not (v == 6 and k in keys[::2])]
    rng.shuffle(phase2)
    # Three kheaders producers; the interceptor stamps each version from the value.
    producers = [
        kheaders.Producer(
            # One record per batch, as in _producer (the embedded broker's high watermark).
            {"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 1},
            interceptors=[VersionStampInterceptor(version_of=lambda r: int(r.value[-1:]))],
        )
        for _ in range(3)
    ]

    def send(producer: kheaders.Producer, batch: list[tuple[bytes, int]]) -> None:
        for key, version in batch:
            producer.produce(topic, value=b"%s:%d" % (key, version), key=key)
            producer.poll(0)
        producer.flush(30)

    for phase in (phase1, phase2):
        threads = [
            threading.Thread(target=send, args=(producers[i], phase[i::3])) for i in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for producer in producers:
        producer.close()

    highest = {k: b"%s:6" % k for k in keys}
    consumer = kheaders.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"e2e-{uuid.uuid4().hex}"}
    )
    try:
        by_version = LatestState(topic, consumer, strategy="header", header="version")
        assert by_version.run_until_caught_up(60)
        assert by_version.as_dict() == highest
        assert all(by_version[k].version == 6 for k in keys)
        assert by_version.stats.records == len(phase1) + len(phase2)
        assert by_version.stats.undecodable_versions == 0
        assert by_version.stats.cross_partition_keys == 0
    finally:
        consumer.close()
    with LatestState(topic, config={"bootstrap.servers": bootstrap}) as by_offset:
        assert by_offset.run_until_caught_up(60)
        stale = {k for k in keys if by_offset[k].value != highest[k]}
        assert set(keys[::2]) <= stale

    copy = f"{topic}-state"
    written = write_state(by_version, _producer(bootstrap), copy, create_topic_on=bootstrap)
    assert written == len(keys)
    assert check_topic(copy, by_version, bootstrap=bootstrap) == set()
    assert check_topic(copy, by_offset, bootstrap=bootstrap) == stale
    with LatestState(copy, config={"bootstrap.servers": bootstrap}) as copied:
        assert copied.run_until_caught_up(30)
        for k in keys:
            assert copied[k].header_view().to_list() == by_version[k].header_view().to_list()
            assert copied[k].timestamp == by_version[k].timestamp


def test_configured_version_stamps_keep_the_last_update_per_key(bootstrap: str, topic: str) -> None:
    """interceptor.classes + compaction.* settings in one config; the hybrid clock stamps."""
    config = {
        "bootstrap.servers": bootstrap,
        "interceptor.classes": "kheaders.interceptors.versioning.VersionStampInterceptor",
        "compaction.strategy": "header",
        "compaction.strategy.header": "rev",
        "compaction.strategy.header.encoding": "varlong",
    }
    with kheaders.Producer(config) as producer:
        for i in range(5):
            producer.produce(topic, value=b"%d" % i, key=b"k", headers=[("rev", b"stale")])
        producer.flush(10)
    with LatestState.from_config(topic, {**config, "interceptor.classes": None}) as state:
        assert (state.rules.strategy, state.rules.header) == ("header", "rev")
        assert state.run_until_caught_up(30)
        assert state[b"k"].value == b"4"
        assert state.stats.replaced == 4
        assert state.stats.undecodable_versions == 0
        assert state[b"k"].header_view().values("rev") == [
            encode_version(state[b"k"].version or 0, "varlong")
        ]


class FailsOnBad:
    """A value deserializer that rejects b"bad"."""

    def deserialize(self, topic: str, headers: object, data: bytes | None) -> bytes | None:
        if data == b"bad":
            raise ValueError("bad record")
        return data


def test_undeserializable_records_are_counted_and_skipped(bootstrap: str, topic: str) -> None:
    p = _producer(bootstrap)
    for value in (b"1", b"bad", b"2"):
        _send(p, topic, b"k", value)
    consumer = kheaders.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"ls-{uuid.uuid4().hex}"},
        value_deserializer=FailsOnBad(),
    )
    try:
        state = LatestState(topic, consumer, batch_size=1)
        assert state.run_until_caught_up(30)
        assert state[b"k"].value == b"2"
        assert state.stats.undeserializable == 1
        assert state.stats.records == 2
    finally:
        consumer.close()


def test_create_compacted_topic_sets_the_policy_once(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource

    from kheaders.compaction import create_compacted_topic

    name = f"compacted-{uuid.uuid4().hex[:8]}"
    assert create_compacted_topic(bootstrap, name, partitions=2) is True
    assert create_compacted_topic(bootstrap, name) is False  # exists: left alone
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.describe_configs([ConfigResource("topic", name)]).values()
    assert future.result(10)["cleanup.policy"].value == "compact"


class PollOnly:
    """A consumer object with only the four calls LatestState requires (no consume())."""

    def __init__(self, inner: Consumer) -> None:
        self.inner = inner

    def assign(self, partitions: list) -> None:
        self.inner.assign(partitions)

    def poll(self, timeout: float = -1):  # type: ignore[no-untyped-def]
        return self.inner.poll(timeout)

    def get_watermark_offsets(self, tp, timeout: float = -1, cached: bool = False):  # type: ignore[no-untyped-def]
        return self.inner.get_watermark_offsets(tp, timeout=timeout, cached=cached)

    def list_topics(self, topic=None, timeout: float = -1):  # type: ignore[no-untyped-def]
        return self.inner.list_topics(topic, timeout=timeout)


class WrapperLike:
    """Shaped like kheaders.Consumer: reads records itself, metadata via ``.wrapped``."""

    def __init__(self, inner: Consumer) -> None:
        self.wrapped = inner

    def assign(self, partitions: list) -> None:
        self.wrapped.assign(partitions)

    def poll(self, timeout: float = -1):  # type: ignore[no-untyped-def]
        return self.wrapped.poll(timeout)

    def consume(self, num_messages: int = 1, timeout: float = -1):  # type: ignore[no-untyped-def]
        return self.wrapped.consume(num_messages, timeout)


@pytest.mark.parametrize("shape", [PollOnly, WrapperLike])
def test_any_confluent_compatible_consumer_shape_works(
    bootstrap: str, topic_factory: Callable[..., str], shape: type
) -> None:
    topic = topic_factory(partitions=2)
    p = _producer(bootstrap)
    for i in range(4):
        _send(p, topic, b"k%d" % (i % 2), b"%d" % i, partition=i % 2)
    inner = _assign_consumer(bootstrap)
    try:
        state = LatestState(topic, shape(inner), keep_messages=True)  # type: ignore[arg-type]
        assert state.run_until_caught_up(30)
        assert state.as_dict() == {b"k0": b"2", b"k1": b"3"}
        assert state[b"k1"].message.value() == b"3"  # type: ignore[attr-defined]
        assert state.positions() == {0: 2, 1: 2}
    finally:
        inner.close()


def test_write_state_takes_latest_output_and_keeps_original_headers(
    bootstrap: str, topic: str
) -> None:
    """latest() over consumed messages -> write_state -> check_topic agrees, headers intact."""
    p = _producer(bootstrap)
    _send(p, topic, b"a", b"a2", 2)
    _send(p, topic, b"a", b"a1", 1)
    p.produce(topic, key=b"b", value=b"b1", headers=[("x", None), ("x", b""), ("version", None)])
    p.flush(10)
    consumer = _assign_consumer(bootstrap)
    try:
        from confluent_kafka import TopicPartition

        consumer.assign([TopicPartition(topic, 0, 0)])
        msgs: list = []
        deadline = time.monotonic() + 30
        while len(msgs) < 3 and time.monotonic() < deadline:
            msgs.extend(m for m in consumer.consume(10, 0.5) if m.error() is None)
    finally:
        consumer.close()
    from kheaders.compaction import CompactionStats, latest

    stats = CompactionStats()
    state = latest(msgs, strategy="header", header="version", stats=stats)
    assert {k: m.value() for k, m in state.items()} == {b"a": b"a2", b"b": b"b1"}
    assert stats.undecodable_versions == 1  # b's null version header
    copy = f"{topic}-copy"
    assert write_state(state, p, copy, create_topic_on=bootstrap) == 2
    assert check_topic(copy, state, bootstrap=bootstrap) == set()
    with LatestState(copy, config={"bootstrap.servers": bootstrap}) as copied:
        assert copied.run_until_caught_up(30)
        assert copied[b"b"].header_view().to_list() == [("x", None), ("x", b""), ("version", None)]


def test_caught_up_means_every_record_was_applied_or_counted(bootstrap: str, topic: str) -> None:
    """consume() keeps a batch's failures for its next call: caught up must not come first."""
    p = _producer(bootstrap)
    for value in (b"1", b"bad", b"2", b"3"):
        p.produce(topic, value=value, key=b"k")
    assert p.flush(10) == 0
    consumer = kheaders.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"ls-{uuid.uuid4().hex}"},
        value_deserializer=FailsOnBad(),
    )
    try:
        state = LatestState(topic, consumer)  # batches of up to 500: one consume() call
        assert state.run_until_caught_up(30)
        assert (state.stats.records, state.stats.undeserializable) == (3, 1)
        assert state[b"k"].value == b"3"
        assert state.positions() == {0: 4}
    finally:
        consumer.close()
