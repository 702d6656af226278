"""A target that is down: the mirror holds at most ``max_in_flight`` copies, commits nothing
past what the target acknowledged, drops nothing, and carries on when the target is back."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import Producer as RawProducer

from kheaders.broker import ApacheKafka, create_topic
from kheaders.mirror import Mirror
from tests.mirror.conftest import fast_group, read_all, running, wait_for
from tests.support.brokers import local_broker

pytestmark = pytest.mark.integration

MAX_IN_FLIGHT = 40


def test_target_down_means_bounded_memory_no_commit_past_acknowledged_and_nothing_lost(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    create_topic(bootstrap, topic + "-dlt")
    target = local_broker(cluster="kheaders-mirrdwn").start()
    keeps_log = isinstance(target, ApacheKafka)
    try:
        create_topic(target.bootstrap, topic)
        source = RawProducer({"bootstrap.servers": bootstrap})

        def produce(first: int, count: int) -> None:
            for i in range(first, first + count):
                source.produce(topic, b"%d" % i)
            source.flush(30)

        mirror = Mirror(
            {"bootstrap.servers": bootstrap, "group.id": f"down-{topic}", **fast_group()},
            target.bootstrap,
            [topic],
            max_in_flight=MAX_IN_FLIGHT,
            # Tansu's memory storage comes back as a new, empty cluster that never heard of
            # the idempotent producer's id: plain retries there. Kafka keeps its log and the
            # producer ids, so the mirror keeps its default (idempotent) producer.
            producer_config={"reconnect.backoff.max.ms": 500}
            | ({} if keeps_log else {"enable.idempotence": False}),
        )
        with running(mirror):
            produce(0, 10)
            wait_for(lambda: mirror.committed().get((topic, 0)) == 10, what="the first copies")
            target.kill()
            produce(10, 300)
            wait_for(lambda: mirror.in_flight >= MAX_IN_FLIGHT, what="the bound to be reached")
            assert mirror.committed()[(topic, 0)] == 10  # nothing past what was acknowledged
            target.start()  # Tansu: back empty; Kafka: back with its log
            create_topic(target.bootstrap, topic)
            wait_for(lambda: mirror.stats.total("sent") >= 310, timeout=90, what="the rest")
            wait_for(lambda: mirror.committed().get((topic, 0)) == 310, what="the final commit")
        assert mirror.max_seen_in_flight <= MAX_IN_FLIGHT
        values = {m.value() for m in read_all(target.bootstrap, topic, 310 if keeps_log else 300)}
        assert {b"%d" % i for i in range(10, 310)} <= values  # the records sent while down
    finally:
        target.stop()
