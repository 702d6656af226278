"""confluent-kafka's Consumer contract, checked on plain confluent-kafka and on kheaders.

Read from confluent-kafka-python's own tests (tests/test_Consumer.py, test_log.py,
integration/consumer/test_incremental_assign.py, tests/common's TestConsumer): constructor
shapes, subclassing with super(), offsets and commits, incremental assign, closed-consumer
errors and logging. Written here, copied from none.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

from tests.compat.conftest import build_consumer, consumer_class, read
from tests.compat.differences import contract

pytestmark = pytest.mark.integration


def test_no_config_is_a_type_error(class_flavour: str) -> None:
    with (
        contract("consumer_no_config_type_error", class_flavour),
        pytest.raises(TypeError, match="expected configuration dict"),
    ):
        consumer_class(class_flavour)()


def test_missing_group_id_is_a_value_error(class_flavour: str, bootstrap: str) -> None:
    with (
        contract("consumer_missing_group_id", class_flavour),
        pytest.raises(ValueError, match=r"group\.id must be set"),
    ):
        consumer_class(class_flavour)({"bootstrap.servers": bootstrap})


def test_config_as_keywords(
    class_flavour: str, consumer_config: dict[str, Any], topic: str, seed: Callable[..., None]
) -> None:
    seed(topic, {"value": b"v"})
    with contract("consumer_config_as_keywords", class_flavour):
        consumer = consumer_class(class_flavour)(**consumer_config)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        assert [m.value() for m in read(consumer, 1)] == [b"v"]
        consumer.close()


@pytest.mark.parametrize("how", ["keyword", "config"])
def test_logger_receives_librdkafka_logs(
    flavour: str, how: str, consumer_config: dict[str, Any]
) -> None:
    lines: list[str] = []
    logger = logging.getLogger(f"compat.consumer.{flavour}.{how}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logger.handlers[:] = [handler]
    config = {**consumer_config, "debug": "msg"}
    with contract(f"consumer_logger_{how}", flavour):
        if how == "keyword":
            consumer = build_consumer(flavour, config, logger=logger)
        else:
            consumer = build_consumer(flavour, {**config, "logger": logger})
        consumer.poll(0)
        consumer.close()
        assert any("INIT" in line for line in lines), lines[:3]


def test_consume_returns_lists_and_checks_its_count(
    flavour: str, consumer_config: dict[str, Any], topic: str, seed: Callable[..., None]
) -> None:
    seed(topic, *({"value": b"%d" % i} for i in range(3)))
    with contract("consumer_consume", flavour):
        consumer = build_consumer(flavour, consumer_config)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        got: list[bytes] = []
        for _ in range(30):
            batch = consumer.consume(num_messages=10, timeout=0.5)
            assert isinstance(batch, list)
            got.extend(m.value() for m in batch if m.error() is None)
            if len(got) == 3:
                break
        assert got == [b"0", b"1", b"2"]
        assert consumer.consume(num_messages=10, timeout=0.1) == []
        with pytest.raises(ValueError, match="num_messages must be between 0 and 1000000"):
            consumer.consume(-100)
        consumer.close()


def test_offsets_commit_position_and_watermarks(
    flavour: str, consumer_config: dict[str, Any], topic: str, seed: Callable[..., None]
) -> None:
    seed(topic, {"value": b"a"}, {"value": b"b"})
    tp = TopicPartition(topic, 0, OFFSET_BEGINNING)
    with contract("consumer_offsets", flavour):
        consumer = build_consumer(flavour, consumer_config)
        consumer.assign([tp])
        assert consumer.assignment() == [TopicPartition(topic, 0, OFFSET_BEGINNING)]
        first, _second = read(consumer, 2)
        committed = consumer.commit(message=first, asynchronous=False)
        assert [(c.topic, c.partition, c.offset) for c in committed] == [(topic, 0, 1)]
        committed = consumer.commit(offsets=[TopicPartition(topic, 0, 2)], asynchronous=False)
        assert [c.offset for c in committed] == [2]
        assert [c.offset for c in consumer.committed([TopicPartition(topic, 0)], timeout=10)] == [2]
        assert [p.offset for p in consumer.position([TopicPartition(topic, 0)])] == [2]
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        assert low == 0
        assert high in (1, 2)
        consumer.seek(TopicPartition(topic, 0, 1))
        assert [m.value() for m in read(consumer, 1)] == [b"b"]
        consumer.pause([TopicPartition(topic, 0)])
        consumer.resume([TopicPartition(topic, 0)])
        with pytest.raises(Exception, match="mutually exclusive"):
            consumer.commit(message=first, offsets=[tp])
        consumer.unassign()
        assert consumer.assignment() == []
        consumer.close()


def test_store_offsets_then_commit(
    flavour: str, consumer_config: dict[str, Any], topic: str, seed: Callable[..., None]
) -> None:
    seed(topic, {"value": b"a"})
    with contract("consumer_store_offsets", flavour):
        consumer = build_consumer(flavour, {**consumer_config, "enable.auto.offset.store": False})
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        (msg,) = read(consumer, 1)
        consumer.store_offsets(message=msg)
        assert [c.offset for c in consumer.commit(asynchronous=False)] == [1]
        with pytest.raises(Exception, match="expected either message or offsets"):
            consumer.store_offsets()
        consumer.close()


def test_incremental_assign(
    flavour: str,
    consumer_config: dict[str, Any],
    topic_factory: Callable[..., str],
    seed: Callable[..., None],
) -> None:
    one, two = topic_factory(), topic_factory()
    seed(one, {"value": b"a"})
    seed(two, {"value": b"b"})
    with contract("consumer_incremental_assign", flavour):
        consumer = build_consumer(flavour, {**consumer_config, "auto.offset.reset": "error"})
        consumer.incremental_assign([TopicPartition(one, 0, OFFSET_BEGINNING)])
        assert [(m.topic(), m.offset()) for m in read(consumer, 1)] == [(one, 0)]
        with pytest.raises(KafkaException) as conflict:
            consumer.incremental_assign([TopicPartition(one, 0, OFFSET_BEGINNING)])
        assert conflict.value.args[0].code() == KafkaError._CONFLICT
        consumer.incremental_assign([TopicPartition(two, 0, OFFSET_BEGINNING)])
        assert [(m.topic(), m.value()) for m in read(consumer, 1)] == [(two, b"b")]
        consumer.incremental_unassign([TopicPartition(one, 0)])
        assert [(tp.topic, tp.partition) for tp in consumer.assignment()] == [(two, 0)]
        with pytest.raises(KafkaException) as invalid:
            consumer.incremental_unassign([TopicPartition(one, 0)])
        assert invalid.value.args[0].code() == KafkaError._INVALID_ARG
        consumer.close()


def test_subscribe_callbacks_get_the_consumer_in_hand(
    flavour: str, consumer_config: dict[str, Any], topic: str, seed: Callable[..., None]
) -> None:
    seed(topic, {"value": b"v"})
    assigned: list[tuple[object, list[int]]] = []
    with contract("consumer_on_assign_gets_the_client", flavour):
        consumer = build_consumer(flavour, consumer_config)

        def on_assign(client: Any, partitions: list[TopicPartition]) -> None:
            assigned.append((client, [p.partition for p in partitions]))

        consumer.subscribe([topic], on_assign=on_assign, on_revoke=lambda c, p: None)
        assert [m.value() for m in read(consumer, 1, timeout=30)] == [b"v"]
        assert consumer.memberid()
        assert consumer.consumer_group_metadata() is not None
        consumer.unsubscribe()
        consumer.close()
        assert assigned
        assert assigned[0][1] == [0]
        assert assigned[0][0] is consumer


def test_closed_consumer_raises_runtime_error_and_closes_twice(
    flavour: str, consumer_config: dict[str, Any]
) -> None:
    with contract("consumer_closed_runtime_error", flavour):
        consumer = build_consumer(flavour, consumer_config)
        consumer.close()
        consumer.close()
        for call in (
            lambda: consumer.poll(0),
            consumer.consume,
            lambda: consumer.subscribe(["t"]),
            lambda: consumer.assign([TopicPartition("t", 0)]),
            consumer.assignment,
            consumer.commit,
            lambda: consumer.store_offsets(offsets=[TopicPartition("t", 0, 1)]),
        ):
            with pytest.raises(RuntimeError, match="Consumer closed"):
                call()


def test_with_block_closes(flavour: str, consumer_config: dict[str, Any]) -> None:
    with contract("consumer_with_block_closes", flavour):
        with build_consumer(flavour, consumer_config) as consumer:
            consumer.poll(0)
        with pytest.raises(RuntimeError, match="Consumer closed"):
            consumer.poll(0)


def test_subclass_calls_super(
    class_flavour: str, consumer_config: dict[str, Any], topic: str, seed: Callable[..., None]
) -> None:
    """The shape of confluent-kafka's own test helper: assign/unassign routed through super()."""
    seed(topic, {"value": b"v"})
    base = consumer_class(class_flavour)

    class Sub(base):  # type: ignore[misc, valid-type]
        def __init__(self, conf: dict[str, Any] | None = None, **kwargs: Any) -> None:
            super().__init__(conf, **kwargs)

        def assign(self, partitions: list[TopicPartition]) -> None:
            super().incremental_assign(partitions)

        def unassign(self, partitions: list[TopicPartition]) -> None:
            super().incremental_unassign(partitions)

        def poll(self, timeout: Any) -> Any:
            assert isinstance(timeout, str)
            return super().poll(timeout=float(timeout))

    with contract("consumer_subclass_super", class_flavour):
        consumer = Sub(consumer_config)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        msg = None
        for _ in range(30):
            msg = consumer.poll("0.5")
            if msg is not None:
                break
        assert msg is not None
        assert msg.value() == b"v"
        consumer.unassign([TopicPartition(topic, 0)])
        assert super(Sub, consumer).assignment() == []
        consumer.close()


CONSUMER_METHODS = sorted(n for n in dir(confluent_kafka.Consumer) if not n.startswith("_"))


def test_every_public_method_is_there(flavour: str, consumer_config: dict[str, Any]) -> None:
    with contract("consumer_methods", flavour):
        consumer = build_consumer(flavour, consumer_config)
        missing = [n for n in CONSUMER_METHODS if not callable(getattr(consumer, n, None))]
        consumer.close()
        assert missing == []


def test_delegated_methods_answer(
    flavour: str, consumer_config: dict[str, Any], topic: str, seed: Callable[..., None]
) -> None:
    """The methods no other check calls: confluent's own, through every flavour."""
    seed(topic, {"value": b"v"})
    with contract("consumer_delegated_calls", flavour):
        consumer = build_consumer(flavour, consumer_config)
        assert topic in consumer.list_topics(timeout=10).topics
        cluster = consumer.cluster_id(timeout=10)
        assert cluster is None or isinstance(cluster, str)
        (found,) = consumer.offsets_for_times([TopicPartition(topic, 0, 0)], timeout=10)
        assert (found.topic, found.partition) == (topic, 0)
        # Timestamp 0 is before the first record: Apache Kafka answers its offset, 0. (Tansu
        # answers 0 to every timestamp lookup, so it agrees here by accident: FIELD-NOTES.)
        assert found.offset == 0
        assert consumer.set_sasl_credentials("user", "secret") is None
        consumer.close()
