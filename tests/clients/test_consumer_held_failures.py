"""A failure consume() keeps for a later call is never lost: close() raises what is left."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Producer as RawProducer
from confluent_kafka import TopicPartition

from kheaders import Consumer, DeserializationError, HeldFailuresError, KHeadersError

pytestmark = pytest.mark.integration


class FailsOnBad:
    def deserialize(self, topic: str, headers: object, data: bytes | None) -> bytes | None:
        if data is not None and data.startswith(b"bad"):
            raise ValueError("cannot read this record")
        return data


def _write(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = RawProducer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(topic, value, b"k")
    assert producer.flush(10) == 0


def _consume_all_good(consumer: Consumer, want: int) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + 15
    while len(got) < want and time.monotonic() < deadline:
        got += [m.value() for m in consumer.consume(100, 0.5) if m.error() is None]
    return got


@pytest.mark.parametrize("auto_commit", [False, True])
def test_close_raises_the_failures_consume_kept(
    bootstrap: str, topic: str, auto_commit: bool
) -> None:
    _write(bootstrap, topic, [b"1", b"bad-1", b"2", b"bad-2", b"3"])
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"held-{uuid.uuid4().hex}",
            "enable.auto.commit": auto_commit,
        },
        value_deserializer=FailsOnBad(),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    assert _consume_all_good(consumer, 3) == [b"1", b"2", b"3"]
    with pytest.raises(HeldFailuresError) as caught:
        consumer.close()
    held = caught.value
    assert isinstance(held, KHeadersError)
    assert all(isinstance(e, DeserializationError) for e in held.exceptions)
    assert [(e.message.offset(), e.message.value()) for e in held.exceptions] == [  # type: ignore[union-attr]
        (1, b"bad-1"),
        (3, b"bad-2"),
    ]
    assert f"{topic}[0]@1" in str(held)
    consumer.close()  # closed once: a second close is a no-op


def test_close_without_kept_failures_returns(bootstrap: str, topic: str) -> None:
    _write(bootstrap, topic, [b"1", b"bad", b"2"])
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"held-{uuid.uuid4().hex}"},
        value_deserializer=FailsOnBad(),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    assert _consume_all_good(consumer, 2) == [b"1", b"2"]
    with pytest.raises(DeserializationError):
        consumer.consume(10, 0.5)  # raised by the next call, before fetching more
    consumer.close()
