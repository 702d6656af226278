"""confluent-kafka's Producer contract, checked on plain confluent-kafka and on kheaders.

Read from confluent-kafka-python's own tests (tests/test_Producer.py, test_threads.py,
test_log.py, integration/producer/): constructor shapes, return values, truthiness,
subclassing, callbacks, purge, logging and threads. Written here, copied from none.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, KafkaException

from tests.compat.conftest import build_producer, producer_class
from tests.compat.differences import contract

pytestmark = pytest.mark.integration

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:1", "message.timeout.ms": 30000, "log_level": 0}


# -- construction ----------------------------------------------------------------------------


def test_no_config_is_a_type_error(class_flavour: str) -> None:
    with (
        contract("producer_no_config_type_error", class_flavour),
        pytest.raises(TypeError, match="expected configuration dict"),
    ):
        producer_class(class_flavour)()


def test_config_as_keywords(
    class_flavour: str, producer_config: dict[str, Any], topic: str
) -> None:
    with contract("producer_config_as_keywords", class_flavour):
        producer = producer_class(class_flavour)(**producer_config)
        producer.produce(topic, b"v")
        assert producer.flush(10) == 0


def test_unknown_librdkafka_setting_is_a_kafka_exception(class_flavour: str) -> None:
    with contract("producer_unknown_setting", class_flavour), pytest.raises(KafkaException):
        producer_class(class_flavour)({"should.fail": False})


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _logger(name: str) -> tuple[logging.Logger, _Lines]:
    logger = logging.getLogger(f"compat.{name}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    handler = _Lines()
    logger.handlers[:] = [handler]
    return logger, handler


@pytest.mark.parametrize("how", ["keyword", "config"])
def test_logger_receives_librdkafka_logs(
    producer_flavour: str, how: str, producer_config: dict[str, Any]
) -> None:
    logger, lines = _logger(f"producer.{producer_flavour}.{how}")
    config = {**producer_config, "debug": "msg"}
    with contract(f"producer_logger_{how}", producer_flavour):
        if how == "keyword":
            producer = build_producer(producer_flavour, config, logger=logger)
        else:
            producer = build_producer(producer_flavour, {**config, "logger": logger})
        producer.poll(0.1)
        assert any("INIT" in line for line in lines.lines), lines.lines[:3]


# -- return values and truthiness ------------------------------------------------------------


def test_an_empty_producer_is_truthy(
    producer_flavour: str, producer_config: dict[str, Any]
) -> None:
    with contract("producer_truthy", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        assert len(producer) == 0
        assert bool(producer) is True


def test_len_counts_records_not_yet_delivered(producer_flavour: str) -> None:
    with contract("producer_len", producer_flavour):
        producer = build_producer(producer_flavour, dict(UNREACHABLE))
        producer.produce("t", b"a")
        producer.produce("t", b"b")
        assert len(producer) >= 2  # librdkafka counts its pending events too
        producer.purge()
        # the purged records' reports are served by flush; a bounded wait, not flush(0): the
        # broker thread may queue an event of its own just then (seen once in CI)
        assert producer.flush(5) == 0
        # an unreachable broker's own error events can still arrive after flush: serve them
        deadline = time.monotonic() + 10
        while len(producer) and time.monotonic() < deadline:
            producer.poll(0.1)
        assert len(producer) == 0


def test_close_returns_true(
    producer_flavour: str, producer_config: dict[str, Any], topic: str
) -> None:
    with contract("producer_close_returns_true", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        producer.produce(topic, b"v")
        assert producer.close() is True


def test_after_close_produce_raises_runtime_error(
    producer_flavour: str, producer_config: dict[str, Any]
) -> None:
    with contract("producer_closed_runtime_error", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        producer.close()
        with pytest.raises(RuntimeError):
            producer.produce("t", b"v")
        assert len(producer) == 0


def test_with_block_closes(
    producer_flavour: str, producer_config: dict[str, Any], topic: str, reader: Callable[..., Any]
) -> None:
    with contract("producer_with_block_closes", producer_flavour):
        with build_producer(producer_flavour, producer_config) as producer:
            producer.produce(topic, b"in-with")
        assert [m.value() for m in reader(topic, 1)] == [b"in-with"]  # flushed on exit
        with pytest.raises(RuntimeError):
            producer.produce(topic, b"after")


def test_flush_and_poll_return_counts(
    producer_flavour: str, producer_config: dict[str, Any], topic: str
) -> None:
    with contract("producer_flush_poll_counts", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        served: list[object] = []
        producer.produce(topic, b"v", on_delivery=lambda err, msg: served.append(err))
        remaining = producer.flush(10)
        assert remaining == 0
        assert isinstance(remaining, int)
        assert served == [None]
        producer.produce(topic, b"w", callback=lambda err, msg: served.append(err))
        count = 0
        for _ in range(120):
            count += producer.poll(0.25)
            if count:
                break
        assert count == 1
        assert served == [None, None]


# -- produce ---------------------------------------------------------------------------------


def test_positional_and_keyword_produce(
    producer_flavour: str,
    producer_config: dict[str, Any],
    topic_factory: Callable[..., str],
    reader: Callable[..., Any],
) -> None:
    topic = topic_factory(partitions=2)
    reports: list[tuple[object, int, int]] = []

    def on_delivery(err: KafkaError | None, msg: confluent_kafka.Message) -> None:
        reports.append((err, msg.partition(), msg.offset()))

    with contract("producer_produce_arguments", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        producer.produce(topic, b"v1", b"k1", 1)
        producer.produce(
            topic=topic,
            value="v2",
            key="k2",
            partition=1,
            on_delivery=on_delivery,
            timestamp=1_700_000_000_123,
            headers=[("h", b"x")],
        )
        assert producer.flush(10) == 0
        assert reports == [(None, 1, 1)]
        first, second = reader(topic, 2, partition=1)
        assert (first.key(), first.value()) == (b"k1", b"v1")
        assert (second.key(), second.value()) == (b"k2", b"v2")
        assert second.timestamp() == (confluent_kafka.TIMESTAMP_CREATE_TIME, 1_700_000_000_123)


def test_delivery_report_for_a_failed_record(producer_flavour: str) -> None:
    errors: list[int] = []
    with contract("producer_failed_delivery_report", producer_flavour):
        producer = build_producer(producer_flavour, {**UNREACHABLE, "message.timeout.ms": 10})
        producer.produce("t", "payload", on_delivery=lambda err, msg: errors.append(err.code()))
        producer.produce("t", "\xc2\xc2", on_delivery=lambda err, msg: errors.append(err.code()))
        assert producer.flush(10) == 0
        assert errors == [KafkaError._MSG_TIMED_OUT] * 2


def test_purge(producer_flavour: str) -> None:
    errors: list[int] = []
    with contract("producer_purge", producer_flavour):
        producer = build_producer(producer_flavour, dict(UNREACHABLE))
        producer.produce(
            "t", b"v", partition=0, callback=lambda err, msg: errors.append(err.code())
        )
        producer.purge(in_queue=False)
        producer.flush(0.01)
        assert errors == []
        producer.purge()
        producer.flush(0.01)
        assert errors == [KafkaError._PURGE_QUEUE]


def test_a_raising_callback_propagates_from_flush_on_each_thread(
    producer_flavour: str, producer_config: dict[str, Any], topic: str
) -> None:
    """test_threads' contract: many threads share one producer; a callback error reaches flush."""

    class Intended(Exception):
        pass

    def crash(err: object, msg: object) -> None:
        raise Intended

    with contract("producer_threads", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        raised: list[str] = []
        done: list[str] = []

        def run() -> None:
            for value in (b"ok", b"crash"):
                producer.produce(topic, value, callback=crash if value == b"crash" else None)
                try:
                    producer.flush(10)
                except Intended:  # any flush may serve any thread's callback
                    raised.append(threading.current_thread().name)
            done.append(threading.current_thread().name)

        threads = [threading.Thread(target=run, name=f"t{i}") for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        for _ in range(4):  # what no thread's flush served yet
            try:
                producer.flush(10)
            except Intended:
                raised.append("main")
        assert len(done) == 4
        assert 1 <= len(raised) <= 4  # callback errors surface from flush, each at most once
        producer.close()


# -- subclassing -----------------------------------------------------------------------------


def test_subclass_calls_super(
    class_flavour: str, producer_config: dict[str, Any], topic: str, reader: Callable[..., Any]
) -> None:
    base = producer_class(class_flavour)

    class Sub(base):  # type: ignore[misc, valid-type]
        def __init__(self, conf: dict[str, Any], default_topic: str) -> None:
            super().__init__(conf)
            self.default_topic = default_topic

        def produce_hi(self) -> None:
            super().produce(self.default_topic, value="hi")

        def flush_all(self) -> int:
            return int(super().flush(10))

    with contract("producer_subclass_super", class_flavour):
        producer = Sub(producer_config, topic)
        producer.produce(topic, value="direct")
        producer.produce_hi()
        assert producer.flush_all() == 0
        assert super(Sub, producer).list_topics(topic, timeout=10).topics[topic].error is None
        assert [m.value() for m in reader(topic, 2)] == [b"direct", b"hi"]
        with pytest.raises(KafkaException):
            Sub({"should.fail": False}, topic)


# -- every delegated method ------------------------------------------------------------------


PRODUCER_METHODS = sorted(n for n in dir(confluent_kafka.Producer) if not n.startswith("_"))


def test_every_public_method_is_there(
    producer_flavour: str, producer_config: dict[str, Any]
) -> None:
    with contract("producer_methods", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        missing = [n for n in PRODUCER_METHODS if not callable(getattr(producer, n, None))]
        assert missing == []


def test_delegated_methods_answer(
    producer_flavour: str, producer_config: dict[str, Any], topic: str
) -> None:
    with contract("producer_delegated_calls", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        assert topic in producer.list_topics(timeout=10).topics
        assert producer.cluster_id(timeout=10) is None or isinstance(producer.cluster_id(), str)
        assert producer.produce_batch(topic, [{"value": b"a"}, {"value": b"b"}]) == 2
        assert producer.flush(10) == 0
        with pytest.raises(KafkaException):  # not transactional
            producer.begin_transaction()


def test_produce_batch_with_headers(
    producer_flavour: str, producer_config: dict[str, Any], topic: str, reader: Callable[..., Any]
) -> None:
    producer = build_producer(producer_flavour, producer_config)
    assert producer.produce_batch(topic, [{"value": b"a", "headers": [("h", b"1")]}]) == 1
    assert producer.flush(10) == 0
    (msg,) = reader(topic, 1)
    assert msg.value() == b"a"
    with contract("produce_batch_drops_headers", producer_flavour):
        assert msg.headers() is None


def test_sasl_credentials_are_delegated(
    producer_flavour: str, producer_config: dict[str, Any]
) -> None:
    with contract("producer_sasl_credentials", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        assert producer.set_sasl_credentials("user", "secret") is None
        producer.close()
