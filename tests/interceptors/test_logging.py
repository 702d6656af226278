"""LoggingInterceptor: structured events per hook, redaction, levels, cheap when disabled."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from confluent_kafka import KafkaError, Message, TopicPartition
from structlog.testing import capture_logs

from kheaders import ConfigurationError, Headers, ProducerRecord, RecordMetadata
from kheaders.interceptors.logging import LoggingInterceptor
from kheaders.redaction import Redactor

TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture
def logs() -> Iterator[list[dict[str, Any]]]:
    with capture_logs() as captured:
        yield captured


def received(headers: Any, offset: int = 3, key: bytes | None = b"k") -> Message:
    msg = Message(topic="orders", partition=1, offset=offset, key=key, value=b"v")
    msg.set_headers(Headers(headers).close())
    return msg


def test_send_and_ack_events_carry_record_facts(logs: list[dict[str, Any]]) -> None:
    icpt = LoggingInterceptor()
    icpt.configure({"client.id": "svc"})
    rec = ProducerRecord("orders", b"v", "user-1", [("traceparent", TP), ("x", b"\x00\x01")])
    icpt.on_send(rec)
    icpt.on_acknowledgement(RecordMetadata("orders", 2, 17), None, rec.headers)
    send, ack = logs
    assert send == {
        "event": "kafka.send",
        "log_level": "info",
        "topic": "orders",
        "key": "user-1",
        "trace_id": "0af7651916cd43dd8448eb211c80319c",
        "client_id": "svc",
        "headers": [("traceparent", TP), ("x", "0x0001")],
    }
    assert ack["event"] == "kafka.ack"
    assert (ack["topic"], ack["partition"], ack["offset"]) == ("orders", 2, 17)
    assert isinstance(ack["latency_ms"], float)
    assert ack["latency_ms"] >= 0
    assert ack["trace_id"] == "0af7651916cd43dd8448eb211c80319c"


def test_failed_delivery_is_a_warning_with_the_error(logs: list[dict[str, Any]]) -> None:
    icpt = LoggingInterceptor("debug")
    rec = ProducerRecord("orders")
    icpt.on_send(rec)
    icpt.on_acknowledgement(
        RecordMetadata("orders"), KafkaError(KafkaError._MSG_TIMED_OUT), rec.headers
    )
    ack = logs[1]
    assert ack["log_level"] == "warning"
    assert "MSG_TIMED_OUT" in ack["error"]
    assert "offset" not in ack
    assert "partition" not in ack


def test_sensitive_headers_are_redacted_by_default(logs: list[dict[str, Any]]) -> None:
    LoggingInterceptor().on_send(
        ProducerRecord(
            "t",
            headers=[
                ("Authorization", b"Bearer s3cr3t"),
                ("x-api-key", b"k"),
                ("cookie", b"c"),
                ("db_password", b"p"),
                ("trace", b"ok"),
            ],
        )
    )
    assert logs[0]["headers"] == [
        ("Authorization", "<redacted>"),
        ("x-api-key", "<redacted>"),
        ("cookie", "<redacted>"),
        ("db_password", "<redacted>"),
        ("trace", "ok"),
    ]
    assert "s3cr3t" not in repr(logs)


def test_redaction_extra_allow_and_off_from_config(logs: list[dict[str, Any]]) -> None:
    icpt = LoggingInterceptor()
    icpt.configure(
        {
            "kheaders.logging.redact.extra": "x-user, x-ssn",
            "kheaders.logging.redact.allow": "schema.key",
        }
    )
    icpt.on_send(
        ProducerRecord("t", headers=[("x-user", b"bob"), ("schema.key", b"1"), ("token", b"t")])
    )
    off = LoggingInterceptor(redact=False)
    off.on_send(ProducerRecord("t", headers=[("token", b"t")]))
    assert logs[0]["headers"] == [
        ("x-user", "<redacted>"),
        ("schema.key", "1"),
        ("token", "<redacted>"),
    ]
    assert logs[1]["headers"] == [("token", "t")]


def test_a_redactor_object_can_be_given(logs: list[dict[str, Any]]) -> None:
    LoggingInterceptor(redact=Redactor(extra=["trace"])).on_send(
        ProducerRecord("t", headers=[("trace", b"x")])
    )
    assert logs[0]["headers"] == [("trace", "<redacted>")]


def test_consume_logs_one_event_per_record(logs: list[dict[str, Any]]) -> None:
    eof = Message(
        topic="orders", partition=1, offset=9, error=KafkaError(KafkaError._PARTITION_EOF)
    )
    batch = [received([("traceparent", TP)]), received([], offset=4, key=b"\xff" * 100), eof]
    assert LoggingInterceptor().on_consume(batch) is batch
    first, second = logs
    assert (first["event"], first["partition"], first["offset"], first["key"]) == (
        "kafka.consume",
        1,
        3,
        "k",
    )
    assert first["trace_id"] == "0af7651916cd43dd8448eb211c80319c"
    assert second["key"].startswith("0xffff")
    assert second["key"].endswith("…")
    assert len(second["key"]) == 65


def test_consume_batch_mode_logs_one_event_with_offset_ranges(
    logs: list[dict[str, Any]],
) -> None:
    icpt = LoggingInterceptor(consume="batch")
    icpt.on_consume([received([], offset=3), received([], offset=5), received([], offset=4)])
    assert logs == [
        {
            "event": "kafka.consume",
            "log_level": "info",
            "count": 3,
            "partitions": [["orders", 1, 3, 5]],
        }
    ]


def test_commit_event_lists_offsets(logs: list[dict[str, Any]]) -> None:
    LoggingInterceptor().on_commit([TopicPartition("orders", 0, 10), TopicPartition("b", 1, 2)])
    assert logs == [
        {"event": "kafka.commit", "log_level": "info", "offsets": [["orders", 0, 10], ["b", 1, 2]]}
    ]


def test_level_comes_from_config(logs: list[dict[str, Any]]) -> None:
    icpt = LoggingInterceptor()
    icpt.configure({"kheaders.logging.level": "DEBUG", "kheaders.logging.headers": "false"})
    icpt.on_send(ProducerRecord("t", headers=[("a", b"1")]))
    assert logs[0]["log_level"] == "debug"
    assert "headers" not in logs[0]


def test_bad_settings_are_rejected() -> None:
    with pytest.raises(ConfigurationError, match="level"):
        LoggingInterceptor("loud")
    with pytest.raises(ConfigurationError, match=r"kheaders\.logging\.consume"):
        LoggingInterceptor().configure({"kheaders.logging.consume": "all"})


class Exploding:
    """A key whose rendering would fail: proves disabled hooks do no work at all."""

    def __repr__(self) -> str:
        raise AssertionError("rendered while disabled")


def test_disabled_level_does_no_work() -> None:
    logger = structlog.wrap_logger(
        structlog.testing.CapturingLogger(),
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
    )
    icpt = LoggingInterceptor("info", logger=logger)
    assert not icpt.enabled
    rec = ProducerRecord("t", key=Exploding())
    icpt.on_send(rec)
    icpt.on_acknowledgement(RecordMetadata("t"), None, rec.headers)
    icpt.on_consume([received([])])
    icpt.on_commit([TopicPartition("t", 0, 1)])
    assert logger._logger.calls == []  # type: ignore[attr-defined]
    loud = LoggingInterceptor("error", logger=logger)
    assert loud.enabled
    loud.on_send(ProducerRecord("t", key="k"))
    assert [c.method_name for c in logger._logger.calls] == ["error"]  # type: ignore[attr-defined]
