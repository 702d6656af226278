"""A CloudEvent (kheaders.cloudevents, binary mode) handled by a Processor that deserializes
it: the handler gets the event; a failure dead-letters its ce_ headers and original bytes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import kheaders
from kheaders.cloudevents import CloudEventDeserializer, CloudEventSerializer, Event
from kheaders.processing import Processor, RetryTopics
from tests.processing.helpers import Running, config, read_all, wait_for

pytestmark = pytest.mark.integration

DATA = b'{ "order":  17,\n "amount": 12.50 }'  # as produced: spacing json.dumps would not keep


class Rejected(Exception):
    """The handler refuses the event."""


def test_a_cloudevent_reaches_the_handler_and_its_failure_dead_letters_the_consumed_record(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    event = Event(
        {
            "specversion": "1.0",
            "type": "com.example.order.placed",
            "source": "/shop/eu",
            "id": "evt-0001",
            "time": "2026-11-25T10:00:00Z",
            "datacontenttype": "application/json",
            "tenant": "acme",
        },
        DATA,
    )
    producer = kheaders.Producer(
        {"bootstrap.servers": bootstrap}, value_serializer=CloudEventSerializer()
    )
    producer.produce(topic, event, b"order-17", headers=[("traceparent-ish", b"\x00\x01")])
    assert producer.flush(10) == 0
    producer.close(timeout=5)
    [sent] = read_all(bootstrap, topic, 1)
    ce = [(k, v) for k, v in sent.headers if k.startswith("ce_")]
    assert ("ce_id", b"evt-0001") in ce
    assert ("ce_tenant", b"acme") in ce
    received: list[Any] = []

    def handle(msg: Any) -> None:
        received.append(msg.value())
        raise Rejected(f"event {msg.value().id} rejected")

    settings: dict[str, Any] = {"value.deserializer": CloudEventDeserializer()}
    proc = Processor(config(bootstrap, **settings), [topic], handle, retry=RetryTopics([0.2]))
    run = Running(proc)
    try:
        wait_for(lambda: len(received) == 2, what="the event handled, then retried")
        [dead] = read_all(bootstrap, f"{topic}-dlt", 1)
    finally:
        run.stop()
    # the handler receives the event (JSON data decoded), the same on the retry topic
    assert len(received) == 2
    assert received[0] == received[1]
    got = received[0]
    assert isinstance(got, Event)
    assert (got.id, got.type, got.source, got["tenant"]) == (
        "evt-0001",
        "com.example.order.placed",
        "/shop/eu",
        "acme",
    )
    assert got.time is not None
    assert got.time.isoformat() == "2026-11-25T10:00:00+00:00"
    assert got.data == {"order": 17, "amount": 12.5}
    assert (dead.key, dead.value) == (b"order-17", DATA)  # the bytes consumed
    assert dead.headers[: len(sent.headers)] == sent.headers  # ce_ headers, content-type...
    assert [(k, v) for k, v in dead.headers if k.startswith("ce_")] == ce  # none added
    # the dead letter is still the event: a CloudEvents reader gets it back whole
    back = CloudEventDeserializer().deserialize(
        f"{topic}-dlt", kheaders.Headers(dead.headers).close(), dead.value
    )
    assert back == got
