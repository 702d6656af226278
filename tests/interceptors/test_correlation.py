"""CorrelationIdInterceptor: ids added once, inherited while handling a record, bound for logs."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import structlog
from confluent_kafka import Message
from structlog.testing import capture_logs

from kheaders import ConfigurationError, Headers, ProducerRecord
from kheaders.interceptors.correlation import (
    CorrelationIdInterceptor,
    correlation_id,
    correlation_scope,
    current_correlation_id,
)


@pytest.fixture(autouse=True)
def clean_context() -> Iterator[None]:
    structlog.contextvars.clear_contextvars()
    yield
    structlog.contextvars.clear_contextvars()
    CorrelationIdInterceptor().on_consume([message(None), message(None)])  # unbind


def message(cid: str | None, topic: str = "t") -> Message:
    msg = Message(topic=topic, partition=0, offset=0)
    msg.set_headers(Headers([] if cid is None else [("correlation.id", cid)]).close())
    return msg


def test_a_new_uuid4_is_added_when_the_record_has_none() -> None:
    out = CorrelationIdInterceptor().on_send(ProducerRecord("t"))
    values = out.headers.values("correlation.id")
    assert len(values) == 1
    assert values[0] is not None
    assert uuid.UUID(values[0].decode()).version == 4


def test_each_record_gets_its_own_id() -> None:
    icpt = CorrelationIdInterceptor()
    ids = {icpt.on_send(ProducerRecord("t")).headers.last_value("correlation.id") for _ in range(5)}
    assert len(ids) == 5


def test_an_existing_id_is_kept_and_never_duplicated() -> None:
    icpt = CorrelationIdInterceptor()
    rec = ProducerRecord("t", headers=[("correlation.id", "given")])
    for _ in range(3):
        rec = icpt.on_send(rec)
    assert rec.headers.values("correlation.id") == [b"given"]


def test_correlation_id_reads_the_last_header() -> None:
    headers = Headers([("correlation.id", "a"), ("correlation.id", "b")])
    assert correlation_id(headers) == "b"
    assert correlation_id(Headers([("correlation.id", b"\xff")])) is None
    assert correlation_id(Message(topic="t")) is None


def test_scope_binds_for_structlog_and_the_producer_inherits_it() -> None:
    icpt = CorrelationIdInterceptor()
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        with correlation_scope(message("c-42")) as cid:
            structlog.get_logger().info("handling")
            forwarded = icpt.on_send(ProducerRecord("out"))
        structlog.get_logger().info("after")
    assert cid == "c-42"
    assert forwarded.headers.values("correlation.id") == [b"c-42"]
    assert logs[0]["correlation_id"] == "c-42"
    assert "correlation_id" not in logs[1]
    assert current_correlation_id() is None


def test_inherit_can_be_switched_off() -> None:
    icpt = CorrelationIdInterceptor()
    icpt.configure({"kheaders.correlation.inherit": "false"})
    with correlation_scope(message("c-1")):
        out = icpt.on_send(ProducerRecord("out"))
    assert out.headers.last_value("correlation.id") != b"c-1"


def test_on_consume_binds_a_single_record_batch_and_unbinds_for_larger_ones() -> None:
    icpt = CorrelationIdInterceptor()
    batch = [message("c-7")]
    assert icpt.on_consume(batch) is batch
    assert structlog.contextvars.get_contextvars()["correlation_id"] == "c-7"
    assert current_correlation_id() == "c-7"
    icpt.on_consume([message("a"), message("b")])
    assert "correlation_id" not in structlog.contextvars.get_contextvars()
    assert current_correlation_id() is None


def test_on_consume_binding_can_be_switched_off() -> None:
    icpt = CorrelationIdInterceptor(bind=False)
    icpt.on_consume([message("c-7")])
    assert current_correlation_id() is None


def test_custom_header_from_config() -> None:
    icpt = CorrelationIdInterceptor()
    icpt.configure({"kheaders.correlation.header": "x-request-id"})
    assert icpt.on_send(ProducerRecord("t")).headers.keys() == ["x-request-id"]


def test_empty_header_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="header"):
        CorrelationIdInterceptor("")
