"""Keys from the environment apply to every role not passed explicitly (issue 35, item 13).

Each of a protector's roles (encrypt, sign; decrypt, verify) comes from its argument when one
is passed, else from its environment variable: passing a signing keyring must never turn off
the encryption ``KHEADERS_PROTECT_KEYS`` configures, on the way out or the way in. The whole
matrix, in memory and on the wire (read back by a plain consumer that holds no keys).
"""

from __future__ import annotations

import base64
import itertools
import time
import uuid
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import TopicPartition

from kheaders import IntegrityError, Producer
from kheaders._errors import ConfigurationError
from kheaders.protect import (
    PROTECT_HEADER,
    SIGN_HEADER,
    ProtectedDeserializer,
    ProtectedSerializer,
    ProtectionHeader,
    RecordKeySerializer,
    SignatureParams,
    StaticKeyring,
)
from tests.protect.helpers import (
    AES_KEY,
    AES_KEY_2,
    SIGNING_PUBLIC,
    SIGNING_SEED,
    protect,
    unprotect,
)

KEYS = "KHEADERS_PROTECT_KEYS"
SIGNING = "KHEADERS_PROTECT_SIGNING_KEYS"
VERIFY = "KHEADERS_PROTECT_VERIFY_KEYS"
ALL_VARIABLES = (
    KEYS,
    KEYS + "_CURRENT",
    SIGNING,
    VERIFY,
    "KHEADERS_PROTECT_BOUND_HEADERS",
    "KHEADERS_PROTECT_CONTEXT",
    "KHEADERS_PROTECT_CONTEXTS",
)
SOURCES = ("passed", "env", "absent")
MATRIX = [c for c in itertools.product(SOURCES, SOURCES) if c != ("absent", "absent")]
PLAINTEXT = b"PLAINTEXT-MARKER"


def b64(key: bytes) -> str:
    return base64.b64encode(key).decode()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ALL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def writer_for(encrypt: str, sign: str, monkeypatch: pytest.MonkeyPatch) -> ProtectedSerializer:
    """A ProtectedSerializer whose encryption and signing keys come from ``encrypt`` /
    ``sign`` ("passed", "env" or "absent"). Passed keys have ids ``p-enc`` / ``p-sig``,
    environment keys ``e-enc`` / ``e-sig``, so the record tells which applied."""
    monkeypatch.delenv(KEYS, raising=False)
    monkeypatch.delenv(SIGNING, raising=False)
    kwargs: dict[str, Any] = {}
    if encrypt == "passed":
        kwargs["keyring"] = StaticKeyring({"p-enc": AES_KEY})
    if encrypt == "env" or encrypt == "passed":  # the environment is set, and loses
        monkeypatch.setenv(KEYS, f"e-enc:{b64(AES_KEY_2)}")
    if sign == "passed":
        kwargs["signing_keyring"] = StaticKeyring({"p-sig": SIGNING_SEED})
    if sign == "env" or sign == "passed":
        monkeypatch.setenv(SIGNING, f"e-sig:{b64(SIGNING_SEED)}")
    return ProtectedSerializer(**kwargs)


def expected_kids(encrypt: str, sign: str) -> tuple[str | None, str | None]:
    enc = {"passed": "p-enc", "env": "e-enc", "absent": None}[encrypt]
    sig = {"passed": "p-sig", "env": "e-sig", "absent": None}[sign]
    return enc, sig


def kids_of(headers: list[tuple[str, bytes | None]]) -> tuple[str | None, str | None]:
    found = dict(headers)
    protect_raw, sign_raw = found.get(PROTECT_HEADER), found.get(SIGN_HEADER)
    return (
        None if protect_raw is None else ProtectionHeader.from_bytes(protect_raw).kid,
        None if sign_raw is None else SignatureParams.from_bytes(sign_raw).kid,
    )


@pytest.mark.parametrize(("encrypt", "sign"), MATRIX)
def test_each_role_comes_from_its_argument_else_from_the_environment(
    encrypt: str, sign: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ser = writer_for(encrypt, sign, monkeypatch)
    _, value, headers = protect(ser, "orders", b"k", PLAINTEXT, [])
    enc_kid, sig_kid = expected_kids(encrypt, sign)
    assert kids_of(headers) == (enc_kid, sig_kid)
    if enc_kid is not None:
        assert value is not None
        assert PLAINTEXT not in value
    else:
        assert value == PLAINTEXT  # signed only: nothing configured encryption


def test_signing_keyring_passed_with_keys_in_the_environment_still_encrypts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's reproduction: before, the environment was read only with no keyring."""
    monkeypatch.setenv(KEYS, f"k1:{b64(AES_KEY)}")
    ser = ProtectedSerializer(signing_keyring=StaticKeyring({"s1": SIGNING_SEED}))
    _, value, headers = protect(ser, "orders", b"k", PLAINTEXT, [])
    assert value != PLAINTEXT
    assert kids_of(headers) == ("k1", "s1")


def test_no_keys_anywhere_is_refused_naming_the_arguments_and_variables() -> None:
    with pytest.raises(ConfigurationError, match=f"keyring=.*{KEYS}.*{SIGNING}"):
        ProtectedSerializer()
    with pytest.raises(ConfigurationError, match=f"keyring=.*{KEYS}.*{VERIFY}"):
        ProtectedDeserializer()


@pytest.mark.parametrize("empty", ["", "  ", " , "])
def test_a_keys_variable_set_but_empty_is_refused_not_read_as_unset(
    empty: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a secret that failed to render looks like: reading it as "no keys" would sign
    without encrypting, or decrypt without verifying, in silence."""
    monkeypatch.setenv(KEYS, empty)
    with pytest.raises(ConfigurationError, match=f"{KEYS} is set but holds no keys"):
        ProtectedSerializer(signing_keyring=StaticKeyring({"s1": SIGNING_SEED}))
    monkeypatch.delenv(KEYS)
    monkeypatch.setenv(VERIFY, empty)
    with pytest.raises(ConfigurationError, match=f"{VERIFY} is set but holds no keys"):
        ProtectedDeserializer(keyring=StaticKeyring({"k1": AES_KEY}))


def test_bound_headers_and_context_from_the_environment_apply_when_a_keyring_is_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KHEADERS_PROTECT_BOUND_HEADERS", "tenant")
    monkeypatch.setenv("KHEADERS_PROTECT_CONTEXT", "billing")
    keys = StaticKeyring({"k1": AES_KEY})
    _, _, headers = protect(ProtectedSerializer(keyring=keys), "orders", b"k", b"v", [])
    header = ProtectionHeader.from_bytes(dict(headers)[PROTECT_HEADER] or b"")
    assert (header.bound, header.context) == (["tenant"], "billing")
    # arguments passed win over the environment, an empty list of bound headers included
    explicit = ProtectedSerializer(keyring=keys, bound_headers=[], context="orders")
    _, _, headers = protect(explicit, "orders", b"k", b"v", [])
    header = ProtectionHeader.from_bytes(dict(headers)[PROTECT_HEADER] or b"")
    assert (header.bound, header.context) == ([], "orders")


# -- the reading side: the same rule, so a reader never accepts less than it was told to --


def test_verify_keys_in_the_environment_apply_when_only_a_keyring_is_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = StaticKeyring({"k1": AES_KEY})
    unsigned = protect(ProtectedSerializer(keyring=keys), "orders", b"k", PLAINTEXT, [])
    monkeypatch.setenv(VERIFY, f"s1:{b64(SIGNING_PUBLIC)}")
    reader = ProtectedDeserializer(keyring=keys)
    with pytest.raises(IntegrityError, match="not signed, and a signature is required"):
        unprotect(reader, "orders", *unsigned)
    signer = ProtectedSerializer(keyring=keys, signing_keyring=StaticKeyring({"s1": SIGNING_SEED}))
    assert unprotect(reader, "orders", *protect(signer, "orders", b"k", PLAINTEXT, [])) == PLAINTEXT


def test_keys_in_the_environment_apply_when_only_a_verify_keyring_is_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    signer = ProtectedSerializer(signing_keyring=StaticKeyring({"s1": SIGNING_SEED}))
    monkeypatch.setenv(KEYS, f"k1:{b64(AES_KEY)}")
    reader = ProtectedDeserializer(verify_keyring=StaticKeyring({"s1": SIGNING_PUBLIC}))
    # a record only signed (its writer built before the keys were set) is plaintext: refused
    monkeypatch.delenv(KEYS)
    plain = protect(signer, "orders", b"k", PLAINTEXT, [])
    with pytest.raises(IntegrityError, match="not encrypted, and encryption is required"):
        unprotect(reader, "orders", *plain)
    monkeypatch.setenv(KEYS, f"k1:{b64(AES_KEY)}")
    both = ProtectedSerializer(signing_keyring=StaticKeyring({"s1": SIGNING_SEED}))
    assert unprotect(reader, "orders", *protect(both, "orders", b"k", PLAINTEXT, [])) == PLAINTEXT


def test_contexts_from_the_environment_apply_when_a_keyring_is_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = StaticKeyring({"k1": AES_KEY})
    record = protect(ProtectedSerializer(keyring=keys), "orders", b"k", PLAINTEXT, [])
    monkeypatch.setenv("KHEADERS_PROTECT_CONTEXTS", "orders")
    assert unprotect(ProtectedDeserializer(keyring=keys), "orders.dlt", *record) == PLAINTEXT


# -- on the wire ---------------------------------------------------------------------------


@pytest.mark.integration
def test_the_matrix_on_the_wire_a_plain_consumer_never_reads_the_plaintext(
    bootstrap: str, topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One producer per combination (config by dotted path where the environment is the
    only source, as a deployment names it), one plain consumer holding no keys."""
    for encrypt, sign in MATRIX:
        ser = writer_for(encrypt, sign, monkeypatch)
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "key.serializer": RecordKeySerializer(),
                "value.serializer": ser,
            }
        )
        producer.produce(topic, PLAINTEXT + f"/{encrypt}/{sign}".encode(), b"k")
        assert producer.flush(30) == 0
        producer.close()
    plain = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"plain-{uuid.uuid4().hex[:8]}"}
    )
    plain.assign([TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    deadline = time.monotonic() + 30
    while len(got) < len(MATRIX) and time.monotonic() < deadline:
        got.extend(m for m in plain.consume(len(MATRIX), 0.5) if m.error() is None)
    plain.close()
    assert len(got) == len(MATRIX)
    for (encrypt, sign), msg in zip(MATRIX, got, strict=True):
        headers = [(k, v) for k, v in msg.headers() or []]
        enc_kid, sig_kid = expected_kids(encrypt, sign)
        assert kids_of(headers) == (enc_kid, sig_kid), (encrypt, sign)
        if enc_kid is None:
            assert msg.value() == PLAINTEXT + f"/{encrypt}/{sign}".encode()
        else:
            assert PLAINTEXT not in msg.value(), (encrypt, sign)
