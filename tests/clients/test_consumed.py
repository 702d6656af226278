"""The consumed bytes of a deserialized record: kept by the client layer beside the record's
Headers (never in them), as long as those live, and read by the dead-letter publisher."""

from __future__ import annotations

import copy
import gc
import pickle

import confluent_kafka
from confluent_kafka import Message

from kheaders import Headers, wrap_consumer
from kheaders._client import consumed
from kheaders._client.consumed import consumed_bytes
from kheaders.deadletter import DeadLetterPublisher
from tests.clients.test_consumer import StubConsumer
from tests.support.interceptors import Utf8Deserializer


def record(offset: int, key: bytes | None, value: bytes) -> Message:
    return Message(topic="t", partition=0, offset=offset, key=key, value=value, headers=None)


def decoded(*records: Message) -> list[Message]:
    """The records as a kheaders consumer's ``consume()`` returns them (key and value
    UTF-8-decoded)."""
    stub = StubConsumer([list(records)])
    c = wrap_consumer(  # type: ignore[arg-type]
        stub, key_deserializer=Utf8Deserializer(), value_deserializer=Utf8Deserializer()
    )
    out = c.consume(10)
    c.close()
    return out


class _Sent:
    """Stands in for the producer's ``produce``: records what a dead letter sends."""

    def __init__(self) -> None:
        self.sent: list[tuple[object, object, object]] = []

    def produce(self, topic: str, value: object, key: object, **_: object) -> None:
        self.sent.append((topic, key, value))


def test_a_decoded_record_keeps_its_consumed_bytes_through_collections() -> None:
    msg, other = decoded(record(0, b"k0", b"v0"), record(1, None, b"v1"))
    gc.collect()  # the bytes live as long as the record's Headers, not until a collection
    assert (msg.key(), msg.value()) == ("k0", "v0")
    assert consumed_bytes(msg) == (b"k0", b"v0")
    assert consumed_bytes(other) == (None, b"v1")


def test_a_dead_letter_of_a_decoded_record_republishes_the_consumed_bytes() -> None:
    (msg,) = decoded(record(7, b"k", b"v"))
    sent = _Sent()
    publisher = DeadLetterPublisher(confluent_kafka.Producer({"bootstrap.servers": "x:9"}))
    publisher._produce = sent.produce  # the wire is not what this test is about
    publisher.publish(msg, ValueError("handler failed"))
    assert sent.sent == [("t-dlt", b"k", b"v")]


def test_copies_and_replaced_headers_do_not_carry_them() -> None:
    (msg,) = decoded(record(0, b"k", b"v"))
    h = msg.headers()
    for twin in (Headers(h), copy.copy(h), h.copy(), pickle.loads(pickle.dumps(h))):
        stranger = record(1, b"own-k", b"own-v")
        stranger.set_headers(twin)
        assert consumed_bytes(stranger) == (b"own-k", b"own-v")
    msg.set_headers(Headers())  # replaced: the record's own (decoded) key and value
    assert consumed_bytes(msg) == ("k", "v")


def test_nothing_is_kept_once_the_record_is_gone() -> None:
    before = len(consumed._kept)
    records = decoded(*(record(i, b"k", b"v") for i in range(50)))
    assert len(consumed._kept) == before + 50
    del records
    gc.collect()
    assert len(consumed._kept) == before
