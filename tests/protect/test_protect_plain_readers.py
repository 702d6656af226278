"""Readers that do not open protected records say so (issue 35, item 14).

A plain value deserializer fed an encrypted record names the cause (``kheaders.protect``)
instead of only ``JSON is not UTF-8``; a reader without verify keys that opens signed records
warns once per topic (through kheaders' logger) unless told ``require_signature=False``; a
reader told to require what it has no keys for is refused at construction.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import MutableMapping, Sequence
from typing import Any

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.serialization import SerializationError
from confluent_kafka.serialization import StringDeserializer as ConfluentStringDeserializer
from structlog.testing import capture_logs

from kheaders import (
    Consumer,
    ContentTypeDeserializer,
    DecodeError,
    DeserializationError,
    Deserializer,
    Headers,
    IntegerDeserializer,
    JsonDeserializer,
    JsonSerializer,
    Producer,
    StringDeserializer,
    from_confluent,
)
from kheaders._errors import ConfigurationError
from kheaders.protect import (
    ProtectedDeserializer,
    ProtectedSerializer,
    RecordKeySerializer,
    StaticKeyring,
)
from tests.protect.helpers import (
    AES_KEY,
    SIGNING_PUBLIC,
    SIGNING_SEED,
    aes_keyring,
    protect,
    signing_keyring,
    unprotect,
)

CAUSE = "the record's value is encrypted (it carries a 'kheaders.protect' header)"
PLAIN_READERS: dict[str, Deserializer] = {
    "json": JsonDeserializer(),
    "string": StringDeserializer(),
    "integer": IntegerDeserializer(),
    "content-type": ContentTypeDeserializer({"application/json": JsonDeserializer()}),
    "confluent": from_confluent(ConfluentStringDeserializer("utf_8"), "value"),
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("KEYS", "SIGNING_KEYS", "VERIFY_KEYS", "CONTEXTS"):
        monkeypatch.delenv(f"KHEADERS_PROTECT_{name}", raising=False)


def encrypted_record() -> tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]:
    """An encrypted JSON record whose ciphertext is not UTF-8 (fixed nonce aside, a fresh
    one makes that a coin toss per byte: retried until it holds)."""
    ser = ProtectedSerializer(JsonSerializer(), keyring=aes_keyring())
    for _ in range(100):
        key, value, headers = protect(ser, "orders", b"k", {"amount": 12}, [])  # type: ignore[arg-type]
        assert value is not None
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            return key, value, headers
    raise AssertionError("no ciphertext that is not UTF-8 in 100 tries")


@pytest.mark.parametrize("name", sorted(PLAIN_READERS))
def test_a_plain_deserializer_names_encryption_as_the_cause(name: str) -> None:
    _, value, headers = encrypted_record()
    with pytest.raises(DecodeError) as refused:
        PLAIN_READERS[name].deserialize("orders", Headers(headers).close(), value)
    text = str(refused.value)
    assert text.startswith(f"topic 'orders': {CAUSE}")
    assert "kheaders.protect.ProtectedDeserializer" in text
    assert "this deserializer saw: " in text  # what it found is kept, after the cause


@pytest.mark.parametrize("name", sorted(PLAIN_READERS))
def test_an_unprotected_record_that_does_not_decode_keeps_its_own_message(name: str) -> None:
    bad = b"\xff\xfe\x00\x01\x02"
    headers = Headers([("content-type", b"application/json"), ("kheaders.sign", b"x")]).close()
    with pytest.raises((DecodeError, SerializationError)) as refused:
        PLAIN_READERS[name].deserialize("orders", headers, bad)
    assert "kheaders.protect" not in str(refused.value)


def test_a_confluent_key_deserializer_is_not_told_the_value_is_encrypted() -> None:
    _, _, headers = encrypted_record()
    key_reader = from_confluent(ConfluentStringDeserializer("utf_8"), "key")
    with pytest.raises(SerializationError):  # the confluent exception, unchanged
        key_reader.deserialize("orders", Headers(headers).close(), b"\xff")


@pytest.mark.integration
def test_a_consumer_with_a_plain_json_deserializer_names_the_cause(
    bootstrap: str, topic: str
) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "key.serializer": RecordKeySerializer(),
            "value.serializer": ProtectedSerializer(JsonSerializer(), keyring=aes_keyring()),
        }
    )
    producer.produce(topic, {"amount": 12}, b"order-1")
    assert producer.flush(30) == 0
    producer.close()
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"plain-{uuid.uuid4().hex[:8]}"},
        value_deserializer=JsonDeserializer(),
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    deadline = time.monotonic() + 30
    refused: DeserializationError | None = None
    while refused is None and time.monotonic() < deadline:
        try:
            consumer.poll(0.5)
        except DeserializationError as exc:
            refused = exc
    consumer.close()
    assert refused is not None, "the protected record was not refused"
    assert CAUSE in str(refused)
    assert "offset 0" in str(refused)


# -- signed records read without verify keys -------------------------------------------------


def signed(topic: str) -> Any:
    ser = ProtectedSerializer(keyring=aes_keyring(), signing_keyring=signing_keyring())
    return protect(ser, topic, b"k", b"v", [])


def unverified_warnings(logs: Sequence[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [e for e in logs if e["event"] == "protect.signature_not_verified"]


def test_signed_records_read_without_verify_keys_warn_once_per_topic() -> None:
    reader = ProtectedDeserializer(keyring=aes_keyring())
    with capture_logs() as logs:
        for topic in ("orders", "orders", "payments", "orders", "payments"):
            assert unprotect(reader, topic, *signed(topic)) == b"v"
    warned = unverified_warnings(logs)
    assert [(w["topic"], w["kid"], w["log_level"]) for w in warned] == [
        ("orders", "s1", "warning"),
        ("payments", "s1", "warning"),
    ]
    assert "verify_keyring=" in warned[0]["fix"]
    assert "require_signature=False" in warned[0]["fix"]


def test_no_warning_when_verifying_or_when_unchecked_reading_is_chosen() -> None:
    verifying = ProtectedDeserializer(
        keyring=aes_keyring(), verify_keyring=StaticKeyring({"s1": SIGNING_PUBLIC})
    )
    chosen = ProtectedDeserializer(keyring=aes_keyring(), require_signature=False)
    unsigned_ser = ProtectedSerializer(keyring=aes_keyring())
    plain_reader = ProtectedDeserializer(keyring=aes_keyring())
    with capture_logs() as logs:
        assert unprotect(verifying, "orders", *signed("orders")) == b"v"
        assert unprotect(chosen, "orders", *signed("orders")) == b"v"
        unsigned = protect(unsigned_ser, "orders", b"k", b"v", [])
        assert unprotect(plain_reader, "orders", *unsigned) == b"v"
    assert unverified_warnings(logs) == []


def test_the_warning_holds_no_key_material_or_plaintext() -> None:
    reader = ProtectedDeserializer(keyring=aes_keyring())
    with capture_logs() as logs:
        unprotect(reader, "orders", *signed("orders"))
    text = repr(unverified_warnings(logs)).encode()
    for secret in (AES_KEY, SIGNING_SEED, AES_KEY.hex().encode(), b"'v'"):
        assert secret not in text


def test_requiring_what_the_reader_has_no_keys_for_is_refused_at_construction() -> None:
    keys = StaticKeyring({"k1": AES_KEY})
    with pytest.raises(ConfigurationError, match="require_signature=True needs verify keys"):
        ProtectedDeserializer(keyring=keys, require_signature=True)
    verify = StaticKeyring({"s1": SIGNING_PUBLIC})
    with pytest.raises(ConfigurationError, match="require_encryption=True needs keys"):
        ProtectedDeserializer(verify_keyring=verify, require_encryption=True)
