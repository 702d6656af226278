"""The mirror's consumer on the new group protocol (KIP-848) and on the classic one."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from kheaders.broker import Broker
from kheaders.mirror import Mirror
from tests.clients.test_group_protocol import PROTOCOLS, produce
from tests.mirror.conftest import read_all, running, wait_for

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_mirror_copies_with_either_protocol(
    protocol: str,
    broker: Broker,
    bootstrap: str,
    cluster_b: str,
    both_topics: Callable[..., str],
) -> None:
    if broker.kind == "embedded":
        pytest.skip("Tansu 0.6 serves no KIP-848 consumer groups: tested on Apache Kafka")
    topic = both_topics(partitions=2)
    produce(bootstrap, topic, 10, 2)
    consumer_config = {"group.protocol": protocol}
    if protocol == "classic":
        consumer_config |= {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}
    mirror = Mirror(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"m-{uuid.uuid4().hex[:8]}",
            **consumer_config,
        },
        cluster_b,
        [topic],
    )
    with running(mirror):
        wait_for(lambda: sum(mirror.committed().values()) == 10, what="the copies committed")
    copied = read_all(cluster_b, topic, 10)
    assert sorted(m.value() for m in copied) == sorted(b"v%d" % n for n in range(10))
