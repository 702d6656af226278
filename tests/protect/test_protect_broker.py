"""Protected records on a real broker: nothing readable on the wire but the metadata, key
rotation, the dead-letter path and back, the async clients, clients built from config."""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import OFFSET_BEGINNING, Message, TopicPartition
from opentelemetry.sdk.trace import TracerProvider

from kheaders import (
    Consumer,
    IntegrityError,
    JsonDeserializer,
    JsonSerializer,
    Producer,
    StringDeserializer,
    StringSerializer,
)
from kheaders.deadletter import DeadLetterPublisher
from kheaders.interceptors.tracing import TracingProducerInterceptor
from kheaders.protect import (
    ProtectedDeserializer,
    ProtectedSerializer,
    ProtectionHeader,
    RecordKeyDeserializer,
    RecordKeySerializer,
    StaticKeyring,
    describe,
)
from kheaders.tracecontext import parse_traceparent
from tests.protect.helpers import (
    AES_KEY,
    AES_KEY_2,
    SIGNING_PUBLIC,
    SIGNING_SEED,
    aes_keyring,
    assert_no_secret,
    signing_keyring,
    verify_keyring,
)

pytestmark = pytest.mark.integration
MARKER = "PLAINTEXT-MARKER"


def b64(key: bytes) -> str:
    return base64.b64encode(key).decode()


def protecting_producer(bootstrap: str, keyring: StaticKeyring | None = None) -> Producer:
    return Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 2,
            "key.serializer": RecordKeySerializer(StringSerializer()),
            "value.serializer": ProtectedSerializer(
                JsonSerializer(),
                keyring=keyring or aes_keyring(),
                signing_keyring=signing_keyring(),
                bound_headers=["tenant"],
            ),
        }
    )


def assigned(consumer: Any, topic: str) -> Any:
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    return consumer


def consumer_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": f"protect-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        **extra,
    }


def read(consumer: Any, count: int, timeout: float = 30.0) -> list[Message | IntegrityError]:
    """``count`` records or refusals, in order; fails after ``timeout`` seconds."""
    out: list[Message | IntegrityError] = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        assert time.monotonic() < deadline, f"read {len(out)} of {count}"
        try:
            msg = consumer.poll(0.5)
        except IntegrityError as exc:
            out.append(exc)
            continue
        if msg is not None and msg.error() is None:
            out.append(msg)
    return out


def produce(producer: Producer, topic: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        producer.produce(
            topic,
            {"n": i, "secret": f"{MARKER}-{i}"},
            f"order-{i}",
            headers=[("traceparent", b"00-%032x-%016x-01" % (i + 1, i + 1)), ("tenant", b"acme")],
        )
    assert producer.flush(30) == 0


def test_plaintext_never_on_the_wire_metadata_readable_without_keys(
    bootstrap: str, topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # configured by dotted paths and the environment only, as a deployment would
    monkeypatch.setenv("KHEADERS_PROTECT_KEYS", f"k1:{b64(AES_KEY)}")
    monkeypatch.setenv("KHEADERS_PROTECT_SIGNING_KEYS", f"s1:{b64(SIGNING_SEED)}")
    monkeypatch.setenv("KHEADERS_PROTECT_VERIFY_KEYS", f"s1:{b64(SIGNING_PUBLIC)}")
    monkeypatch.setenv("KHEADERS_PROTECT_BOUND_HEADERS", "tenant,traceparent")
    tracing = TracingProducerInterceptor("span", tracer_provider=TracerProvider())
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "client.id": "protect-test",
            "interceptor.classes": "kheaders.interceptors.client_id.ClientIdInterceptor",
            "key.serializer": "kheaders.protect.RecordKeySerializer",
            "value.serializer": "kheaders.protect.ProtectedSerializer",
        },
        interceptors=[tracing],
    )
    for i in range(20):
        producer.produce(
            topic, f"{MARKER}-{i}".encode(), b"order-%d" % i, headers={"tenant": b"acme"}
        )
    assert producer.flush(30) == 0
    producer.close()

    raw = assigned(confluent_kafka.Consumer(consumer_config(bootstrap)), topic)
    try:
        records = read(raw, 20)
    finally:
        raw.close()
    for msg in records:
        assert isinstance(msg, Message)
        everything = (msg.value() or b"") + b"".join(
            k.encode() + (v or b"") for k, v in msg.headers() or []
        )
        assert MARKER.encode() not in everything
        headers = dict(msg.headers() or [])
        assert headers["client.id"] == b"protect-test"  # metadata: readable, untouched
        assert headers["tenant"] == b"acme"
        assert parse_traceparent(headers["traceparent"]) is not None  # a span per record
        protection = ProtectionHeader.from_bytes(headers["kheaders.protect"])
        assert (protection.kid, protection.bound) == ("k1", ["tenant", "traceparent"])
        assert_no_secret(repr(msg.headers()))

    keyless = assigned(Consumer(consumer_config(bootstrap)), topic)  # no keys: headers only
    try:
        first = read(keyless, 1)[0]
        assert isinstance(first, Message)
        assert first.headers().last_value("client.id") == b"protect-test"
        assert describe(first.headers()) == "<encrypted kid=k1 alg=A256GCM>"
    finally:
        keyless.close()

    reader = assigned(
        Consumer(
            consumer_config(
                bootstrap,
                **{
                    "key.deserializer": "kheaders.protect.RecordKeyDeserializer",
                    "value.deserializer": "kheaders.protect.ProtectedDeserializer",
                },
            )
        ),
        topic,
    )
    try:
        values = [m.value() for m in read(reader, 20) if isinstance(m, Message)]
    finally:
        reader.close()
    assert values == [f"{MARKER}-{i}".encode() for i in range(20)]


def json_reader(bootstrap: str, keyring: StaticKeyring, **kw: Any) -> Consumer:
    return Consumer(
        consumer_config(bootstrap),
        key_deserializer=RecordKeyDeserializer(StringDeserializer()),
        value_deserializer=ProtectedDeserializer(
            JsonDeserializer(), keyring=keyring, verify_keyring=verify_keyring(), **kw
        ),
    )


def test_rotation_new_key_writes_old_records_still_read(bootstrap: str, topic: str) -> None:
    ring = StaticKeyring({"k1": AES_KEY})
    producer = protecting_producer(bootstrap, ring)
    produce(producer, topic, 3)
    ring.add("k2", AES_KEY_2)  # rotation: the next records are written with k2
    produce(producer, topic, 3, start=3)
    producer.close()

    both = assigned(json_reader(bootstrap, StaticKeyring({"k1": AES_KEY, "k2": AES_KEY_2})), topic)
    try:
        records = read(both, 6)
    finally:
        both.close()
    assert [m.value()["n"] for m in records if isinstance(m, Message)] == list(range(6))
    kids = [
        ProtectionHeader.from_bytes(m.headers().last_value("kheaders.protect")).kid for m in records
    ]  # type: ignore[union-attr]
    assert kids == ["k1"] * 3 + ["k2"] * 3

    only_new = assigned(json_reader(bootstrap, StaticKeyring({"k2": AES_KEY_2})), topic)
    try:
        outcome = read(only_new, 6)
    finally:
        only_new.close()
    for offset, exc in enumerate(outcome[:3]):
        assert isinstance(exc, IntegrityError)
        text = str(exc)
        assert f"topic {topic!r} partition 0 offset {offset}" in text
        assert "unknown encryption key id 'k1'" in text
        assert exc.message.value() is not None
        assert MARKER.encode() not in exc.message.value()
    assert [m.value()["n"] for m in outcome[3:] if isinstance(m, Message)] == [3, 4, 5]


def test_dead_letter_path_and_back(bootstrap: str, topic_factory: Callable[..., str]) -> None:
    orders, dead = topic_factory(), topic_factory()
    ring = StaticKeyring({"k1": AES_KEY})
    producer = protecting_producer(bootstrap, ring)
    produce(producer, orders, 1)  # offset 0: fine
    ring.add("k2", AES_KEY_2)
    produce(producer, orders, 1, start=1)  # offset 1: a key the first reader lacks
    producer.close()
    # offset 2: a forged copy of offset 0, its bound tenant header changed
    raw = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    source = assigned(confluent_kafka.Consumer(consumer_config(bootstrap)), orders)
    try:
        original = read(source, 1)[0]
    finally:
        source.close()
    assert isinstance(original, Message)
    forged = [(k, b"evil" if k == "tenant" else v) for k, v in original.headers() or []]
    raw.produce(orders, original.value(), original.key(), headers=forged)
    assert raw.flush(30) == 0

    publisher_producer = Producer({"bootstrap.servers": bootstrap})
    dlt = DeadLetterPublisher(publisher_producer, dead)
    first = assigned(json_reader(bootstrap, StaticKeyring({"k1": AES_KEY})), orders)
    try:
        outcome = read(first, 3)
    finally:
        first.close()
    assert isinstance(outcome[0], Message)
    assert outcome[0].value()["n"] == 0
    for exc, words in zip(
        outcome[1:], ["unknown encryption key id 'k2'", "bad signature (kid='s1')"], strict=True
    ):
        assert isinstance(exc, IntegrityError), exc
        assert words in str(exc)
        dlt.publish(exc)
    assert publisher_producer.flush(30) == 0

    # the dead-letter topic's reader holds both keys and accepts the original context
    later = assigned(json_reader(bootstrap, ring, contexts={orders}), dead)
    try:
        from_dlt = read(later, 2)
    finally:
        later.close()
    good, bad = from_dlt
    assert isinstance(good, Message)
    assert good.value() == {"n": 1, "secret": f"{MARKER}-1"}
    assert good.headers().last_value("kheaders.dlt.original.offset") == b"1"
    assert isinstance(bad, IntegrityError)
    assert "bad signature" in str(bad)
    # without that context, the same record is refused where it now sits
    strict = assigned(json_reader(bootstrap, ring), dead)
    try:
        refused = read(strict, 1)[0]
    finally:
        strict.close()
    assert isinstance(refused, IntegrityError)
    assert f"context {orders!r}" in str(refused)

    # and back: replayed byte for byte to the original topic, it reads there as before
    stored = _first_raw(bootstrap, dead)
    raw.produce(orders, stored.value(), stored.key(), headers=stored.headers())
    assert raw.flush(30) == 0
    back = assigned(json_reader(bootstrap, ring), orders)
    try:
        again = read(back, 4)[3]
    finally:
        back.close()
    assert isinstance(again, Message)
    assert again.value() == {"n": 1, "secret": f"{MARKER}-1"}


def _first_raw(bootstrap: str, topic: str) -> Message:
    consumer = assigned(confluent_kafka.Consumer(consumer_config(bootstrap)), topic)
    try:
        msg = read(consumer, 1)[0]
    finally:
        consumer.close()
    assert isinstance(msg, Message)
    return msg


@pytest.mark.asyncio
async def test_async_clients_protect_and_refuse(bootstrap: str, topic: str) -> None:
    from kheaders.aio import AIOConsumer, AIOProducer

    producer = AIOProducer(
        {"bootstrap.servers": bootstrap, "linger.ms": 2},
        key_serializer=RecordKeySerializer(),
        value_serializer=ProtectedSerializer(
            JsonSerializer(), keyring=aes_keyring(), signing_keyring=signing_keyring()
        ),
    )
    futures = [await producer.produce(topic, {"n": i, "s": MARKER}, b"k%d" % i) for i in range(5)]
    for fut in futures:
        await fut
    await producer.close(10)

    async def read_async(**kw: Any) -> list[Any]:
        consumer = AIOConsumer(
            consumer_config(bootstrap),
            key_deserializer=RecordKeyDeserializer(),
            value_deserializer=ProtectedDeserializer(
                JsonDeserializer(), keyring=aes_keyring(), verify_keyring=verify_keyring(), **kw
            ),
        )
        await consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        out: list[Any] = []
        deadline = time.monotonic() + 30
        try:
            while len(out) < 5:
                assert time.monotonic() < deadline, f"read {len(out)} of 5"
                try:
                    msg = await consumer.poll(0.5)
                except IntegrityError as exc:
                    out.append(exc)
                    continue
                if msg is not None and msg.error() is None:
                    out.append(msg.value())
        finally:
            await consumer.close()
        return out

    assert await read_async() == [{"n": i, "s": MARKER} for i in range(5)]
    refusals = await read_async(contexts={"elsewhere"})
    assert all(isinstance(r, IntegrityError) and "context" in str(r) for r in refusals)
    for offset, refusal in enumerate(refusals):
        assert f"at topic {topic!r} partition 0 offset {offset}:" in str(refusal)
        assert refusal.message.offset() == offset  # the raw record, for the dead-letter path
