"""The broker finder: env, Docker and embedded paths."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from kheaders import BrokerUnavailableError
from kheaders.broker import (
    BOOTSTRAP_ENV,
    EmbeddedBroker,
    create_topic,
    docker_available,
    find_or_start_broker,
    free_port,
    wait_for_broker,
)


def test_fixture_broker_round_trips_a_record_with_headers(bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, b"v", b"k", headers=[("a", b"1"), ("a", None)])
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "t"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    msg = consumer.poll(10)
    consumer.close()
    assert msg is not None
    assert msg.error() is None
    assert msg.headers() == [("a", b"1"), ("a", None)]


def test_env_variable_is_used_as_is(monkeypatch: pytest.MonkeyPatch, bootstrap: str) -> None:
    monkeypatch.setenv(BOOTSTRAP_ENV, bootstrap)
    found = find_or_start_broker()
    assert (found.bootstrap, found.kind) == (bootstrap, "env")
    found.stop()  # a no-op for a cluster kheaders did not start
    wait_for_broker(bootstrap, timeout=5)


def test_embedded_broker_stops_and_its_process_is_reaped() -> None:
    broker = EmbeddedBroker().start()
    assert broker.running
    wait_for_broker(broker.bootstrap, timeout=5)
    broker.stop()
    assert not broker.running
    with pytest.raises(BrokerUnavailableError):
        wait_for_broker(broker.bootstrap, timeout=1)


def test_embedded_broker_restarts_on_the_same_port_empty() -> None:
    with EmbeddedBroker() as broker:
        port = broker.port
        broker.kill()
        assert not broker.running
        broker.start()
        assert broker.port == port
        wait_for_broker(broker.bootstrap, timeout=5)


def test_unreachable_env_cluster_fails_with_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BOOTSTRAP_ENV, "127.0.0.1:1")
    with pytest.raises(BrokerUnavailableError, match=r"127\.0\.0\.1:1"):
        find_or_start_broker(timeout=1)


def test_create_topic_at_a_wrong_address_names_the_bootstrap_and_the_cause() -> None:
    wrong = f"127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(BrokerUnavailableError) as caught:
        create_topic(wrong, "orders", timeout=2)
    text = str(caught.value)
    assert "'orders'" in text
    assert wrong in text
    assert "Connection refused" in text  # librdkafka's cause, not an empty TimeoutError


def test_create_topic_at_a_name_that_does_not_resolve_says_so() -> None:
    with pytest.raises(BrokerUnavailableError, match=r"nosuchhost\.invalid:9092.*resolve"):
        create_topic("nosuchhost.invalid:9092", "orders", timeout=2)


def test_docker_path_reports_availability_without_raising() -> None:
    # Where no engine answers, the finder falls back to the embedded broker (tested above).
    if not docker_available():
        pytest.skip("no Docker engine answers on this machine: the apache/kafka path is not run")
    found = find_or_start_broker()
    try:
        assert found.kind == "docker"
        wait_for_broker(found.bootstrap, timeout=30)
    finally:
        found.stop()


def test_apache_kafka_cluster_ids_never_start_with_a_dash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An id starting with ``-`` made Kafka's storage tool stop at ``-t -...`` (one start in 64)."""
    import uuid

    from kheaders.broker import _apache

    dashed = uuid.UUID(bytes=b"\xf8" + bytes(15))  # base64url "-A..."
    drawn = iter([dashed, uuid.UUID(int=1)])
    monkeypatch.setattr(_apache.uuid, "uuid4", lambda: next(drawn))
    ident = _apache.new_cluster_id()
    assert not ident.startswith("-")
    assert len(ident) == 22
