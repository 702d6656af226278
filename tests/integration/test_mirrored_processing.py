"""Mirrored records (kheaders.mirror) meeting a Processor and kheaders.protect on the far
cluster: provenance and message id kept through retry and dead-letter topics; a protected
record opens after the hop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

import kheaders
from kheaders.deadletter import spring as sh
from kheaders.interceptors.message_id import MessageIdInterceptor
from kheaders.mirror import (
    HOPS,
    MESSAGE_ID,
    ORIGIN_CLUSTER,
    ORIGIN_OFFSET,
    ORIGIN_PARTITION,
    ORIGIN_TOPIC,
    Mirror,
)
from kheaders.processing import Processor, RetryTopics
from tests.integration.conftest import Keys
from tests.integration.helpers import open_one, opener, protected_producer
from tests.mirror.conftest import CLUSTER_B, fast_group, running
from tests.processing.helpers import Running, config, read_all, wait_for

pytestmark = pytest.mark.integration

PROVENANCE = (MESSAGE_ID, ORIGIN_CLUSTER, ORIGIN_TOPIC, ORIGIN_PARTITION, ORIGIN_OFFSET, HOPS)


def _mirror_one(bootstrap: str, cluster_b: str, topic: str, group: str) -> None:
    mirror = Mirror(
        {"bootstrap.servers": bootstrap, "group.id": group, **fast_group()}, cluster_b, [topic]
    )
    with running(mirror):
        wait_for(lambda: mirror.stats.total("sent") == 1, what="the record mirrored to B")


def _values(headers: list[tuple[str, bytes | None]], key: str) -> list[bytes | None]:
    return [v for k, v in headers if k == key]


def test_a_mirrored_record_keeps_provenance_and_message_id_through_retry_and_dead_letter(
    bootstrap: str, cluster_b: str, both_topics: Callable[..., str]
) -> None:
    topic = both_topics()
    producer = kheaders.Producer(
        {"bootstrap.servers": bootstrap}, interceptors=[MessageIdInterceptor()]
    )
    producer.produce(topic, b"payload", b"k", headers=[("app", b"\x01")])
    assert producer.flush(10) == 0
    producer.close(timeout=5)
    _mirror_one(bootstrap, cluster_b, topic, "int-prov")
    [far] = read_all(cluster_b, topic, 1)
    for key in PROVENANCE:
        assert len(_values(far.headers, key)) == 1, key  # the mirror stamped each once
    assert _values(far.headers, ORIGIN_TOPIC) == [topic.encode()]
    assert (_values(far.headers, HOPS)[0] or b"").endswith(CLUSTER_B.encode())
    handled: list[str] = []
    lock = threading.Lock()

    def handle(msg: Any) -> None:
        with lock:
            handled.append(msg.topic())
        raise RuntimeError("downstream unavailable")

    proc = Processor(config(cluster_b), [topic], handle, retry=RetryTopics([0.2]))
    run = Running(proc)
    try:
        wait_for(lambda: len(handled) == 2, what="handled on the topic and its retry")
        [retried] = read_all(cluster_b, f"{topic}-retry", 1)
        [dead] = read_all(cluster_b, f"{topic}-dlt", 1)
    finally:
        run.stop()
    for hop in (retried, dead):
        assert (hop.key, hop.value) == (far.key, far.value)
        assert hop.headers[: len(far.headers)] == far.headers
        for key in PROVENANCE:  # unchanged: not rewritten, not added again
            assert _values(hop.headers, key) == _values(far.headers, key), key
    assert dead.last(sh.ORIGINAL_TOPIC) == topic.encode()  # written at the first failure


def test_a_protected_record_mirrored_to_another_cluster_opens_there(
    bootstrap: str, cluster_b: str, both_topics: Callable[..., str], keys: Keys
) -> None:
    topic = both_topics()
    producer = protected_producer(
        bootstrap, keys, signed=True, **{"interceptor.classes": [MessageIdInterceptor()]}
    )
    producer.produce(topic, b"salary 4200", b"emp-7", headers=[("tenant", b"acme")])
    assert producer.flush(10) == 0
    producer.close(timeout=5)
    [near] = read_all(bootstrap, topic, 1)
    _mirror_one(bootstrap, cluster_b, topic, "int-protect")
    [far] = read_all(cluster_b, topic, 1)
    assert (far.key, far.value) == (near.key, near.value)
    assert far.headers[: len(near.headers)] == near.headers  # provenance comes after
    opened = open_one(cluster_b, topic, 0, opener(keys, signed=True))  # same topic name
    assert not isinstance(opened, Exception), opened
    assert (opened.key(), opened.value()) == (b"emp-7", b"salary 4200")
    assert opened.headers().last_value(ORIGIN_CLUSTER) is not None
