"""LatestState, write_state and check_topic against a real broker (KIP-280 on the client side)."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer

from interceptors.versioning import VersionStampInterceptor
from kheaders import BrokerUnavailableError, ConfigurationError, ProducerRecord
from kheaders.compaction import LatestState, check_topic, encode_version, write_state

pytestmark = pytest.mark.integration


def _producer(bootstrap: str) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})


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
    # Each record's version rides in the header, stamped by the interceptor from the value.
    stamp = VersionStampInterceptor(version_of=lambda r: int(r.value.split(b":")[1]))
    # Phase 1 carries the highest version of the even keys, phase 2 everything else, so
    # for those keys the record at the highest offset is stale by construction.
    phase1 = [(k, 6) for k in keys[::2]]
    phase2 = [(k, v) for k in keys for v in versions if not (v == 6 and k in keys[::2])]
    rng.shuffle(phase2)
    producers = [_producer(bootstrap) for _ in range(3)]

    def send(producer: Producer, batch: list[tuple[bytes, int]]) -> None:
        for key, version in batch:
            record = stamp.on_send(ProducerRecord(topic, b"%s:%d" % (key, version), key=key))
            producer.produce(topic, value=record.value, key=key, headers=record.headers.to_list())
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

    highest = {k: b"%s:6" % k for k in keys}
    with LatestState(
        topic, config={"bootstrap.servers": bootstrap}, strategy="header", header="version"
    ) as by_version:
        assert by_version.run_until_caught_up(60)
        assert by_version.as_dict() == highest
        assert all(by_version[k].version == 6 for k in keys)
        assert by_version.stats.records == len(phase1) + len(phase2)
        assert by_version.stats.cross_partition_keys == 0
        with LatestState(topic, config={"bootstrap.servers": bootstrap}) as by_offset:
            assert by_offset.run_until_caught_up(60)
            stale = {k for k in keys if by_offset[k].value != highest[k]}
            assert set(keys[::2]) <= stale

        copy = f"{topic}-state"
        written = write_state(by_version, _producer(bootstrap), copy, create_topic_on=bootstrap)
        assert written == len(keys)
        assert check_topic(copy, by_version, bootstrap=bootstrap) == set()
        assert check_topic(copy, by_offset, bootstrap=bootstrap) == stale
        copied = LatestState(copy, config={"bootstrap.servers": bootstrap})
        try:
            assert copied.run_until_caught_up(30)
            for k in keys:
                assert copied[k].header_view().to_list() == by_version[k].header_view().to_list()
        finally:
            copied.close()


def test_create_compacted_topic_sets_the_policy_once(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource

    from kheaders.compaction import create_compacted_topic

    name = f"compacted-{uuid.uuid4().hex[:8]}"
    assert create_compacted_topic(bootstrap, name, partitions=2) is True
    assert create_compacted_topic(bootstrap, name) is False  # exists: left alone
    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.describe_configs([ConfigResource("topic", name)]).values()
    assert future.result(10)["cleanup.policy"].value == "compact"
