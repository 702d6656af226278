"""A serializer that names ``context`` sees its record (topic, headers, field, the key as
sent); one that does not is called ``serialize(topic, headers, data)`` as before."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import kheaders
import kheaders.aio
from kheaders import Headers, SerializationContext, Serializer
from kheaders._client.producer import sender_of
from kheaders._serde.protocols import ContextSerializer, takes_context

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:9", "message.timeout.ms": 1000}


class OldStyle:
    """Today's contract: three positional arguments, nothing else accepted."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def serialize(self, topic: str, headers: Headers, data: Any) -> bytes:
        self.calls.append((topic, type(headers), data))
        return b"old:" + bytes(data)


class Keyed:
    """Reads its record: writes the key it will be sent under into a header."""

    def __init__(self) -> None:
        self.contexts: list[SerializationContext] = []

    def serialize(
        self,
        topic: str,
        headers: Headers,
        data: Any,
        *,
        context: SerializationContext | None = None,
    ) -> bytes | None:
        assert context is not None
        assert context.topic == topic
        assert context.headers is headers
        self.contexts.append(context)
        headers.add(f"{context.field}-saw", repr(context.key).encode())
        return None if data is None else bytes(data)


def _handed(producer: kheaders.Producer) -> list[tuple[Any, ...]]:
    handed: list[tuple[Any, ...]] = []
    sender_of(producer).hand = lambda topic, value, key, *rest: handed.append(
        (key, value, [] if rest[-1] is None else rest[-1].to_list())
    )
    return handed


def test_an_old_style_serializer_is_called_as_before() -> None:
    key, value = OldStyle(), OldStyle()
    producer = kheaders.Producer(UNREACHABLE, key_serializer=key, value_serializer=value)
    handed = _handed(producer)
    producer.produce("t", b"v", b"k")
    producer.close(timeout=0)
    assert key.calls == [("t", Headers, b"k")]
    assert value.calls == [("t", Headers, b"v")]
    assert handed == [(b"old:k", b"old:v", [])]
    assert not takes_context(key.serialize)
    assert isinstance(key, Serializer)


def test_a_context_serializer_sees_the_key_as_sent() -> None:
    """The value serializer sees what the key serializer returned; the key serializer sees
    the key as given."""
    keyed_key, keyed_value = Keyed(), Keyed()
    producer = kheaders.Producer(
        UNREACHABLE, key_serializer=OldStyle(), value_serializer=keyed_value
    )
    handed = _handed(producer)
    producer.produce("t", b"v", b"k", headers=[("a", b"1")])
    producer.close(timeout=0)
    assert handed == [(b"old:k", b"v", [("a", b"1"), ("value-saw", b"b'old:k'")])]
    [context] = keyed_value.contexts
    assert (context.topic, context.field, context.key) == ("t", "value", b"old:k")

    producer = kheaders.Producer(UNREACHABLE, key_serializer=keyed_key, value_serializer=Keyed())
    handed = _handed(producer)
    producer.produce("t", b"v", b"k")
    producer.produce("t", b"w", None)
    producer.close(timeout=0)
    assert [c.field for c in keyed_key.contexts] == ["key", "key"]
    assert [c.key for c in keyed_key.contexts] == [b"k", None]
    assert [h for _, _, h in handed] == [
        [("key-saw", b"b'k'"), ("value-saw", b"b'k'")],
        [("key-saw", b"None"), ("value-saw", b"None")],
    ]
    assert takes_context(keyed_value.serialize)
    assert isinstance(keyed_value, ContextSerializer)
    assert isinstance(keyed_value, Serializer)


def test_each_call_gets_a_context_of_its_own() -> None:
    """Never one object mutated between the key and the value call (confluent's
    SerializingProducer shares one)."""
    key, value = Keyed(), Keyed()
    producer = kheaders.Producer(UNREACHABLE, key_serializer=key, value_serializer=value)
    _handed(producer)
    for i in range(3):
        producer.produce("t", b"v", b"%d" % i)
    producer.close(timeout=0)
    contexts = key.contexts + value.contexts
    assert len({id(c) for c in contexts}) == 6
    assert [c.key for c in value.contexts] == [b"0", b"1", b"2"]


def test_the_async_producer_passes_the_context_too() -> None:
    value = Keyed()

    async def main() -> list[tuple[Any, ...]]:
        producer = kheaders.aio.AIOProducer(UNREACHABLE, value_serializer=value)
        handed = _handed(producer.wrapped)
        await producer.produce("t", b"v", b"k")
        await producer.close(0)
        return handed

    handed = asyncio.run(main())
    assert handed[0][2] == [("value-saw", b"b'k'")]


@pytest.mark.parametrize("serialize", [len, print, lambda *a, **k: None, lambda t, h, d: None])
def test_what_takes_no_context_keyword_is_called_the_old_way(serialize: Any) -> None:
    assert not takes_context(serialize)


class KeyedReader:
    """A deserializer that names ``context``: records the key each call was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any, Any]] = []

    def deserialize(
        self,
        topic: str,
        headers: Headers,
        data: bytes | None,
        *,
        context: SerializationContext | None = None,
    ) -> Any:
        assert context is not None
        assert (context.topic, context.headers) == (topic, headers)
        self.seen.append((context.field, context.key, data))
        return data


@pytest.mark.integration
def test_a_context_deserializer_sees_the_key_as_consumed_on_consumer_and_processor(
    bootstrap: str, topic_factory: Any
) -> None:
    """Key and value deserializers that take ``context=`` get the raw key bytes as consumed,
    in the Consumer and in a Processor (one deserialization rule); old-style ones beside
    them are called as before."""
    from kheaders.processing import Processor
    from tests.processing.helpers import Running, config, wait_for

    topic = topic_factory()
    with kheaders.Producer({"bootstrap.servers": bootstrap}) as producer:
        producer.produce(topic, b"v-1", b"k-1")
        producer.produce(topic, b"v-2", None)
        producer.flush(30)
    keys, values = KeyedReader(), KeyedReader()
    consumer = kheaders.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"ctx-{topic}",
            "auto.offset.reset": "earliest",
        },
        key_deserializer=keys,
        value_deserializer=values,
    )
    consumer.subscribe([topic])
    got: list[Any] = []
    try:
        wait_for(
            lambda: (
                got.extend(m for m in consumer.consume(10, 0.5) if not m.error()) or len(got) >= 2
            )
        )
    finally:
        consumer.close()
    assert values.seen == [("value", b"k-1", b"v-1"), ("value", None, b"v-2")]
    assert keys.seen == [("key", b"k-1", b"k-1"), ("key", None, None)]
    handled = KeyedReader()
    processor = Processor(
        {**config(bootstrap), "value.deserializer": handled},
        [topic],
        lambda msg: None,
    )
    running = Running(processor)
    wait_for(lambda: len(handled.seen) >= 2, what="both records deserialized by the processor")
    running.stop()
    assert handled.seen[:2] == [("value", b"k-1", b"v-1"), ("value", None, b"v-2")]
