"""Adapters between kheaders serde and confluent_kafka.serialization, both ways."""

from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka import DeserializingConsumer, SerializingProducer, TopicPartition
from confluent_kafka import serialization as cs
from confluent_kafka.serialization import MessageField, SerializationContext
from hypothesis import given
from hypothesis import strategies as st

from kheaders import (
    ContentTypeDeserializer,
    FromConfluentDeserializer,
    FromConfluentSerializer,
    Headers,
    JsonDeserializer,
    JsonSerializer,
    ReadOnlyHeadersError,
    StringDeserializer,
    StringSerializer,
    ToConfluentDeserializer,
    ToConfluentSerializer,
    from_confluent,
    to_confluent,
)


class HeaderStamping(cs.Serializer):  # type: ignore[misc]
    """Adds a header the way confluent's header_schema_id_serializer does; records its ctx."""

    def __init__(self) -> None:
        self.contexts: list[SerializationContext] = []

    def __call__(self, obj: object, ctx: SerializationContext | None = None) -> bytes | None:
        assert ctx is not None
        self.contexts.append(ctx)
        key = "__key_schema_id" if ctx.field == MessageField.KEY else "__value_schema_id"
        value = b"\x01" + uuid.UUID(int=7).bytes
        if isinstance(ctx.headers, list):
            ctx.headers.append((key, value))
        elif isinstance(ctx.headers, dict):
            ctx.headers[key] = value
        else:
            raise cs.SerializationError("Missing headers")
        ctx.field = MessageField.NONE  # a careless serializer must not affect the next call
        return str(obj).encode()


# -- from_confluent: confluent serde used by kheaders -----------------------------------------


@given(st.text())
def test_confluent_string_serde_roundtrips_through_the_adapters(value: str) -> None:
    headers = Headers()
    data = from_confluent(cs.StringSerializer()).serialize("t", headers, value)
    assert data == value.encode()
    assert from_confluent(cs.StringDeserializer()).deserialize("t", headers, data) == value


@given(st.integers(-(2**31), 2**31 - 1))
def test_confluent_integer_serde_roundtrips_through_the_adapters(value: int) -> None:
    data = from_confluent(cs.IntegerSerializer(), "key").serialize("t", Headers(), value)
    assert (
        from_confluent(cs.IntegerDeserializer(), "key").deserialize("t", Headers(), data) == value
    )


def test_headers_a_confluent_serializer_appends_land_in_the_record_headers() -> None:
    stamping = HeaderStamping()
    headers = Headers([("trace", b"t1")])
    assert from_confluent(stamping, "value").serialize("orders", headers, 5) == b"5"
    assert headers.to_list() == [
        ("trace", b"t1"),
        ("__value_schema_id", b"\x01" + uuid.UUID(int=7).bytes),
    ]
    ctx = stamping.contexts[0]
    assert ctx.topic == "orders"


def test_key_and_value_adapters_get_their_own_field_and_a_fresh_context_per_call() -> None:
    stamping = HeaderStamping()
    key_ser = from_confluent(stamping, "key")
    value_ser = from_confluent(stamping, MessageField.VALUE)
    headers = Headers()
    key_ser.serialize("t", headers, "k")
    value_ser.serialize("t", headers, "v")
    key_ser.serialize("t", headers, "k")
    assert [k for k, _ in headers] == ["__key_schema_id", "__value_schema_id", "__key_schema_id"]
    first, second, third = stamping.contexts
    assert first is not second
    assert first is not third
    assert first.headers is not third.headers


def test_confluent_serializer_that_rewrites_the_list_is_mirrored() -> None:
    def rewrite(obj: object, ctx: SerializationContext | None) -> bytes:
        assert ctx is not None
        assert isinstance(ctx.headers, list)
        ctx.headers[:] = [(k, v) for k, v in ctx.headers if k != "drop"] + [("new", "s")]
        return b"x"

    headers = Headers([("drop", b"1"), ("keep", b"2"), ("drop", b"3")])
    from_confluent(rewrite, kind="serializer").serialize("t", headers, None)
    assert headers.to_list() == [("keep", b"2"), ("new", b"s")]


def test_confluent_serializer_adding_an_invalid_header_fails_naming_it() -> None:
    def bad(obj: object, ctx: SerializationContext | None) -> bytes:
        assert ctx is not None
        ctx.headers.append(("", b"x"))
        return b"x"

    with pytest.raises(ValueError, match="header key must not be empty"):
        from_confluent(bad, kind="serializer").serialize("t", Headers(), 1)


def test_confluent_serializer_that_replaces_ctx_headers_is_mirrored() -> None:
    def swap(obj: object, ctx: SerializationContext | None) -> bytes:
        assert ctx is not None
        ctx.headers = {"only": "this"}
        return b"x"

    headers = Headers([("old", b"1")])
    from_confluent(swap, kind="serializer").serialize("t", headers, None)
    assert headers.to_list() == [("only", b"this")]


def test_a_bad_header_among_appended_ones_leaves_the_headers_unchanged() -> None:
    def half_bad(obj: object, ctx: SerializationContext | None) -> bytes:
        assert ctx is not None
        ctx.headers.extend([("good", b"1"), ("bad", 3)])
        return b"x"

    headers = Headers([("a", b"0")])
    with pytest.raises(TypeError, match="header 'bad'"):
        from_confluent(half_bad, kind="serializer").serialize("t", headers, None)
    assert headers.to_list() == [("a", b"0")]


def test_confluent_serializer_returning_non_bytes_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"topic 'orders'.*returned str"):
        from_confluent(lambda o, c: "text", kind="serializer").serialize("orders", Headers(), 1)


def test_confluent_errors_propagate_unchanged() -> None:
    with pytest.raises(cs.SerializationError):
        from_confluent(cs.IntegerSerializer()).serialize("t", Headers(), 2**40)


def test_confluent_deserializer_sees_a_list_copy_or_none() -> None:
    seen: list[object] = []

    def spy(value: bytes | None, ctx: SerializationContext | None) -> object:
        assert ctx is not None
        seen.append((ctx.topic, ctx.field, ctx.headers))
        if ctx.headers:
            ctx.headers.append(("sneaky", b"x"))
        return value

    de = from_confluent(spy, "key", kind="deserializer")
    headers = Headers([("a", b"1")]).close()
    assert de.deserialize("t", headers, b"v") == b"v"
    assert de.deserialize("t", Headers().close(), None) is None
    assert seen[0][:2] == ("t", MessageField.KEY)
    assert seen[1] == ("t", MessageField.KEY, None)
    assert headers.to_list() == [("a", b"1")]


def test_from_confluent_tells_kinds_apart_and_checks_its_arguments() -> None:
    assert isinstance(from_confluent(cs.StringSerializer()), FromConfluentSerializer)
    assert isinstance(from_confluent(cs.StringDeserializer()), FromConfluentDeserializer)
    with pytest.raises(TypeError, match="kind="):
        from_confluent(lambda o, c: b"")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="field must be 'key' or 'value'"):
        from_confluent(cs.StringSerializer(), "none")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind must be"):
        from_confluent(lambda o, c: b"", kind="both")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="callable"):
        from_confluent(42, kind="serializer")  # type: ignore[call-overload]


# -- to_confluent: kheaders serde used by confluent ------------------------------------------


def ctx(headers: object, field: MessageField = MessageField.VALUE) -> SerializationContext:
    return SerializationContext("orders", field, headers)


def test_to_confluent_appends_added_headers_to_the_callers_list() -> None:
    sent: list[tuple[str, bytes | None]] = [("trace", b"t")]
    out = to_confluent(JsonSerializer())({"a": 1}, ctx(sent))
    assert out == b'{"a":1}'
    assert sent == [("trace", b"t"), ("content-type", b"application/json")]


def test_to_confluent_replaces_a_content_type_instead_of_duplicating() -> None:
    sent: list[tuple[str, bytes | str | None]] = [("content-type", "text/plain"), ("a", b"1")]
    ser = to_confluent(JsonSerializer())
    ser(1, ctx(sent))
    ser(2, ctx(sent))
    assert sent == [("content-type", b"application/json"), ("a", b"1")]


def test_to_confluent_writes_changes_into_a_dict() -> None:
    sent: dict[str, bytes | str | None] = {"content-type": "text/plain", "a": b"1"}
    to_confluent(StringSerializer(content_type=True))("x", ctx(sent))
    assert sent == {"content-type": b"text/plain; charset=utf-8", "a": b"1"}


def test_to_confluent_unchanged_headers_are_left_untouched() -> None:
    sent = [("a", "text value")]
    dict_sent = {"a": "text"}
    ser = to_confluent(StringSerializer())
    assert ser("x", ctx(sent)) == b"x"
    assert ser("x", ctx(dict_sent)) == b"x"
    assert ser("x", ctx(None)) == b"x"
    assert ser("x", None) == b"x"
    assert sent == [("a", "text value")]
    assert dict_sent == {"a": "text"}


def test_to_confluent_refuses_to_drop_headers_when_ctx_headers_is_none() -> None:
    with pytest.raises(TypeError, match=r"topic 'orders'.*ctx.headers is None.*headers=\[\]"):
        to_confluent(JsonSerializer())({"a": 1}, ctx(None))


def test_to_confluent_rejects_header_shapes_that_cannot_carry_changes() -> None:
    with pytest.raises(TypeError, match=r"ctx\.headers is tuple"):
        to_confluent(JsonSerializer())({"a": 1}, ctx((("a", b"1"),)))


def test_to_confluent_deserializer_accepts_list_dict_and_none() -> None:
    de = to_confluent(
        ContentTypeDeserializer(
            {"application/json": JsonDeserializer(), "text/plain": StringDeserializer()}
        )
    )
    assert isinstance(de, ToConfluentDeserializer)
    assert de(b"[1]", ctx([("content-type", b"application/json")])) == [1]
    assert de(b"hi", ctx({"content-type": b"text/plain"})) == "hi"
    with pytest.raises(ValueError, match="no 'content-type' header"):
        de(b"hi", ctx(None))


def test_to_confluent_deserializer_gives_read_only_headers() -> None:
    class Adding:
        def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> object:
            headers.add("x", b"1")
            return data

    with pytest.raises(ReadOnlyHeadersError):
        to_confluent(Adding())(b"v", ctx([("a", b"1")]))


def test_to_confluent_needs_a_serializer_or_deserializer() -> None:
    assert isinstance(to_confluent(JsonSerializer()), ToConfluentSerializer)
    assert isinstance(to_confluent(JsonSerializer()), cs.Serializer)
    assert isinstance(to_confluent(JsonDeserializer()), cs.Deserializer)
    with pytest.raises(TypeError, match="neither serialize"):
        to_confluent(object())  # type: ignore[call-overload]


def test_adapters_compose_both_ways() -> None:
    inner = from_confluent(to_confluent(JsonSerializer()), "value")
    headers = Headers()
    data = inner.serialize("t", headers, {"a": [1]})
    assert headers.to_list() == [("content-type", b"application/json")]
    back = from_confluent(to_confluent(JsonDeserializer()))
    assert back.deserialize("t", headers.close(), data) == {"a": [1]}


# -- Schema Registry serializers in header mode (mock registry) ------------------------------

SCHEMA = json.dumps(
    {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
)


@pytest.fixture
def registry() -> object:
    sr = pytest.importorskip(
        "confluent_kafka.schema_registry",
        reason="confluent-kafka's Schema Registry extra (confluent-kafka[json]) is not installed",
    )
    pytest.importorskip("jsonschema")
    return sr.SchemaRegistryClient.new_client({"url": "mock://kheaders"})


@pytest.mark.parametrize("field", ["key", "value"])
def test_schema_registry_header_schema_id_roundtrips_through_kheaders_headers(
    registry: object, field: str
) -> None:
    from confluent_kafka.schema_registry import header_schema_id_serializer
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

    ser = JSONSerializer(
        SCHEMA, registry, conf={"schema.id.serializer": header_schema_id_serializer}
    )
    headers = Headers([("trace", b"t")])
    data = from_confluent(ser, field).serialize("orders", headers, {"id": 3})  # type: ignore[arg-type]
    assert data == b'{"id":3}'  # no 5-byte prefix: the id went into a header
    (schema_id,) = headers.values(f"__{field}_schema_id")
    assert schema_id is not None
    assert len(schema_id) == 17
    assert schema_id[0] == 1

    de = from_confluent(JSONDeserializer(None, schema_registry_client=registry), field)  # type: ignore[arg-type]
    assert de.deserialize("orders", headers.close(), data) == {"id": 3}
    with pytest.raises(cs.SerializationError):
        de.deserialize("orders", Headers(), data)  # without the header there is no schema id


def test_schema_registry_validation_errors_propagate(registry: object) -> None:
    from confluent_kafka.schema_registry import header_schema_id_serializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer

    ser = JSONSerializer(
        SCHEMA, registry, conf={"schema.id.serializer": header_schema_id_serializer}
    )
    headers = Headers()
    with pytest.raises(cs.SerializationError, match="is not of type 'integer'"):
        from_confluent(ser).serialize("orders", headers, {"id": "x"})
    assert len(headers) == 0


# -- against a real broker -------------------------------------------------------------------


@pytest.mark.integration
def test_kheaders_json_inside_confluent_serializing_producer(bootstrap: str, topic: str) -> None:
    producer = SerializingProducer(
        {
            "bootstrap.servers": bootstrap,
            "key.serializer": to_confluent(StringSerializer()),
            "value.serializer": to_confluent(JsonSerializer()),
        }
    )
    producer.produce(topic, key="k1", value={"id": 1}, headers=[("trace", b"t1")])
    producer.produce(topic, key="k2", value={"id": 2}, headers=[])
    assert producer.flush(10) == 0

    consumer = DeserializingConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"serde-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "key.deserializer": to_confluent(StringDeserializer()),
            "value.deserializer": to_confluent(
                ContentTypeDeserializer({"application/json": JsonDeserializer()})
            ),
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    try:
        received = []
        for _ in range(50):
            msg = consumer.poll(0.5)
            if msg is not None:
                received.append(msg)
            if len(received) == 2:
                break
    finally:
        consumer.close()
    assert [(m.key(), m.value()) for m in received] == [("k1", {"id": 1}), ("k2", {"id": 2})]
    assert received[0].headers() == [("trace", b"t1"), ("content-type", b"application/json")]
    assert received[1].headers() == [("content-type", b"application/json")]
