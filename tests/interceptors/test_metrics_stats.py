"""librdkafka statistics as observable instruments, from real clients on the real broker."""

from __future__ import annotations

import json
from collections.abc import Callable

import confluent_kafka
import pytest
from confluent_kafka import TopicPartition
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from kheaders import ConfigurationError, Consumer, Producer, wrap_consumer
from kheaders.interceptors.metrics import (
    BROKER_RTT,
    BROKER_RTT_P99,
    CONSUMER_LAG,
    CONSUMER_LAG_STORED,
    QUEUE_BYTES,
    QUEUE_MESSAGES,
    MetricsConsumerInterceptor,
    Statistics,
    StatisticsBridge,
    with_statistics,
)
from tests.interceptors.metrics_helpers import collect, wait_for

pytestmark = pytest.mark.integration


def test_with_statistics_chains_the_users_callback_and_sets_the_interval() -> None:
    seen: list[str] = []
    cfg = with_statistics({"stats_cb": seen.append, "statistics.interval.ms": "2000"})
    assert cfg["statistics.interval.ms"] == 2000
    bridge = cfg["stats_cb"]
    assert isinstance(bridge, StatisticsBridge)
    bridge('{"client_id": "c", "type": "producer", "msg_cnt": 3, "msg_size": 30}')
    bridge("not json")  # kept from the user's callback never; the last good one stays
    assert seen == [
        '{"client_id": "c", "type": "producer", "msg_cnt": 3, "msg_size": 30}',
        "not json",
    ]
    assert bridge.latest == Statistics("c", "producer", 3, 30)
    with pytest.raises(ConfigurationError, match="stats_cb"):
        with_statistics({"stats_cb": "not callable"})
    with pytest.raises(ConfigurationError, match=r"statistics\.interval\.ms"):
        with_statistics({"statistics.interval.ms": "often"})


def test_statistics_parse_maps_the_documented_fields() -> None:
    doc = {
        "client_id": "svc",
        "type": "consumer",
        "msg_cnt": 0,
        "msg_size": 0,
        "brokers": {
            "127.0.0.1:9092/1": {
                "nodeid": 1,
                "nodename": "127.0.0.1:9092",
                "rtt": {"cnt": 4, "avg": 1500, "p99": 4000},
            },
            "127.0.0.1:9092/bootstrap": {"nodeid": -1, "rtt": {"cnt": 1, "avg": 9}},
            "GroupCoordinator": {"nodeid": 1, "nodename": "x:1", "rtt": {"cnt": 0}},
        },
        "topics": {
            "orders": {
                "partitions": {
                    "0": {"consumer_lag": 7, "consumer_lag_stored": 2},
                    "1": {"consumer_lag": -1},
                    "-1": {"consumer_lag": 3},
                }
            }
        },
    }
    stats = Statistics.parse(json.dumps(doc))
    assert stats.lag == {("orders", 0): 7}
    assert stats.lag_stored == {("orders", 0): 2}
    assert stats.rtt == {(1, "127.0.0.1:9092"): (0.0015, 0.004)}
    with pytest.raises(ValueError, match="object"):
        Statistics.parse("[]")


def test_producer_queue_depth_and_broker_rtt_from_a_config_built_producer(
    bootstrap: str, topic: str, meter_provider: MeterProvider, reader: InMemoryMetricReader
) -> None:
    docs: list[str] = []
    config = with_statistics(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 60_000,
            "client.id": "queue-test",
            "stats_cb": docs.append,
        },
        interval_ms=1000,
        meter_provider=meter_provider,
    )
    producer = Producer(config)
    for _ in range(7):
        producer.produce(topic, b"x" * 10)

    def sampled() -> bool:
        """A document with the 7 queued records and a broker with round trips in its window."""
        if not docs:
            return False
        doc = json.loads(docs[-1])
        timed = [b for b in doc["brokers"].values() if b["nodeid"] >= 0 and b["rtt"]["cnt"]]
        return doc["msg_cnt"] == 7 and bool(timed)

    def poll() -> None:
        producer.list_topics(timeout=5)  # a metadata round trip: rtt samples in the window
        producer.poll(0.3)

    wait_for(sampled, poll, 30)
    last = json.loads(docs[-1])  # what the bridge holds: no poll() since, so no newer one
    metrics = collect(reader)
    base = {"messaging.system": "kafka", "messaging.client.id": "queue-test"}
    assert metrics[QUEUE_MESSAGES].unit == "{message}"
    assert metrics[QUEUE_MESSAGES].value(**base) == 7
    assert metrics[QUEUE_BYTES].unit == "By"
    assert metrics[QUEUE_BYTES].value(**base) == last["msg_size"] > 0
    rtt = metrics[BROKER_RTT]
    assert rtt.unit == "s"
    timed = [b for b in last["brokers"].values() if b["nodeid"] >= 0 and b["rtt"]["cnt"]]
    assert len(rtt.points) == len(timed)
    for broker in timed:
        host, _, port = broker["nodename"].rpartition(":")
        attrs = {"server__address": host, "server__port": int(port)}
        assert (
            rtt.value(**attrs, kheaders__broker__id=broker["nodeid"]) == broker["rtt"]["avg"] / 1e6
        )
        p99 = metrics[BROKER_RTT_P99].value(**attrs, kheaders__broker__id=broker["nodeid"])
        assert p99 == broker["rtt"]["p99"] / 1e6
    producer.purge()
    producer.close(0)


def test_consumer_lag_per_partition_after_a_commit(
    bootstrap: str,
    topic_factory: Callable[..., str],
    meter_provider: MeterProvider,
    reader: InMemoryMetricReader,
) -> None:
    topic = topic_factory()
    with Producer({"bootstrap.servers": bootstrap}) as producer:
        for i in range(5):  # one batch each: the embedded broker's high watermark is exact then
            producer.produce(topic, b"v%d" % i)
            producer.flush(10)
    group = f"g-{topic}"
    config = with_statistics(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "client.id": "lag-test",
            "interceptor.classes": "kheaders.interceptors.metrics.MetricsConsumerInterceptor",
        },
        interval_ms=1000,
        meter_provider=meter_provider,
    )
    bridge = config["stats_cb"]
    assert isinstance(bridge, StatisticsBridge)
    consumer = Consumer(config)
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = []
    wait_for(lambda: len(got) >= 2, lambda: got.extend(consumer.consume(2 - len(got), 0.5)), 20)
    consumer.commit(message=got[-1], asynchronous=False)

    def lag() -> int | None:
        stats = bridge.latest
        return None if stats is None else stats.lag.get((topic, 0))

    wait_for(lambda: lag() == 3, lambda: consumer.poll(0.2), 20)
    stored = collect(reader)[CONSUMER_LAG_STORED]
    assert stored.unit == "{message}"
    # the polls that waited for statistics read the other 3 records: the position is at the
    # end (stored lag 0) while the committed offset is still 2 (lag 3)
    wait_for(
        lambda: bridge.latest is not None and bridge.latest.lag_stored.get((topic, 0)) == 0,
        lambda: consumer.poll(0.2),
        20,
    )
    assert collect(reader)[CONSUMER_LAG_STORED].value(messaging__destination__name=topic) == 0
    point = collect(reader)[CONSUMER_LAG]
    assert point.unit == "{message}"
    assert point.value(messaging__destination__name=topic) == 3
    assert point.attributes() == [
        {
            "messaging.system": "kafka",
            "messaging.client.id": "lag-test",
            "messaging.destination.name": topic,
            "messaging.destination.partition.id": "0",
            "messaging.consumer.group.name": group,
        }
    ]
    icpt = consumer.interceptors.interceptors[0]
    assert isinstance(icpt, MetricsConsumerInterceptor)
    consumer.close()  # the interceptor closes the config's bridge: the client leaves the report
    assert bridge.closed
    assert CONSUMER_LAG not in collect(reader) or not collect(reader)[CONSUMER_LAG].points


def test_a_wrapped_client_is_bridged_when_built_with_the_bridge_config(
    bootstrap: str, meter_provider: MeterProvider, reader: InMemoryMetricReader
) -> None:
    """For a wrapped client the callback is fixed when confluent builds it: build it with
    ``with_statistics(...)`` and wrap it, as docs/interceptors.md says."""
    config = with_statistics(
        {"bootstrap.servers": bootstrap, "group.id": "wrapped", "client.id": "wrapped-test"},
        interval_ms=1000,
        meter_provider=meter_provider,
    )
    bridge = config["stats_cb"]
    assert isinstance(bridge, StatisticsBridge)
    consumer = wrap_consumer(confluent_kafka.Consumer(config))
    wait_for(lambda: bridge.latest is not None, lambda: consumer.poll(0.2), 20)
    assert bridge.latest is not None
    assert bridge.latest.client_id == "wrapped-test"
    assert bridge.latest.client_type == "consumer"
    consumer.close()


def test_the_async_producer_feeds_the_bridge_from_its_own_polling(
    bootstrap: str, topic: str, meter_provider: MeterProvider, reader: InMemoryMetricReader
) -> None:
    import asyncio
    import time

    from kheaders.aio import AIOProducer

    config = with_statistics(
        {"bootstrap.servers": bootstrap, "client.id": "aio-stats"},
        interval_ms=1000,
        meter_provider=meter_provider,
    )
    bridge = config["stats_cb"]
    assert isinstance(bridge, StatisticsBridge)

    async def main() -> None:
        producer = AIOProducer(config)
        await (await producer.produce(topic, b"v"))
        deadline = time.monotonic() + 20
        while bridge.latest is None and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        await producer.close()

    asyncio.run(main())
    assert bridge.latest is not None
    assert bridge.latest.client_id == "aio-stats"
    queued = collect(reader)[QUEUE_MESSAGES].value(messaging__client__id="aio-stats")
    assert queued == bridge.latest.queue_messages
