"""Protecting and opening records in memory, as the clients call the wrappers (key first,
then value, with one Headers object), and the fixed keys the tests use."""

from __future__ import annotations

import base64
from collections.abc import Collection, Sequence
from typing import Any

from kheaders import Headers, SerializationContext
from kheaders.protect import (
    ProtectedDeserializer,
    ProtectedSerializer,
    RecordKeyDeserializer,
    RecordKeySerializer,
    StaticKeyring,
    public_key_of,
)

AES_KEY = bytes(range(32))
AES_KEY_2 = bytes(range(100, 132))
SIGNING_SEED = bytes(range(200, 232))
SIGNING_PUBLIC = public_key_of(SIGNING_SEED)
SECRETS = (AES_KEY, AES_KEY_2, SIGNING_SEED)

Pairs = list[tuple[str, bytes | None]]


def aes_keyring(*kids: str) -> StaticKeyring:
    """Keys ``k1`` (AES_KEY) and ``k2`` (AES_KEY_2), as asked; the last one writes."""
    keys = {"k1": AES_KEY, "k2": AES_KEY_2}
    return StaticKeyring({kid: keys[kid] for kid in kids or ("k1",)})


def signing_keyring() -> StaticKeyring:
    return StaticKeyring({"s1": SIGNING_SEED})


def verify_keyring() -> StaticKeyring:
    return StaticKeyring({"s1": SIGNING_PUBLIC})


def writer(
    *, sign: bool = True, bound: Sequence[str] = ("tenant",), **kw: Any
) -> ProtectedSerializer:
    return ProtectedSerializer(
        keyring=kw.pop("keyring", aes_keyring()),
        signing_keyring=signing_keyring() if sign else None,
        bound_headers=bound,
        **kw,
    )


def reader(
    *, verify: bool = True, contexts: Collection[str] | None = None, **kw: Any
) -> ProtectedDeserializer:
    return ProtectedDeserializer(
        keyring=kw.pop("keyring", aes_keyring()),
        verify_keyring=verify_keyring() if verify else None,
        contexts=contexts,
        **kw,
    )


def protect(
    ser: ProtectedSerializer, topic: str, key: bytes | None, value: bytes | None, headers: Pairs
) -> tuple[bytes | None, bytes | None, Pairs]:
    """(key, value, headers) as they would go on the wire."""
    h = Headers(headers)
    k = RecordKeySerializer().serialize(topic, h, key)
    v = ser.serialize(topic, h, value, context=SerializationContext(topic, h, k, "value"))
    return k, v, h.to_list()


def unprotect(
    de: ProtectedDeserializer, topic: str, key: bytes | None, value: bytes | None, headers: Pairs
) -> Any:
    """The plaintext value, as a consumer's deserializers give it."""
    h = Headers(headers).close()
    k = RecordKeyDeserializer().deserialize(topic, h, key)
    return de.deserialize(topic, h, value, context=SerializationContext(topic, h, k, "value"))


def secret_forms() -> list[bytes]:
    """Every way a key could show up in text: raw, hex, base64 (standard and URL-safe)."""
    out: list[bytes] = []
    for s in SECRETS:
        out += [
            s,
            s.hex().encode(),
            base64.b64encode(s),
            base64.urlsafe_b64encode(s),
            repr(s).encode(),
        ]
    return out


def assert_no_secret(text: str, *plaintexts: bytes) -> None:
    raw = text.encode("utf-8", "backslashreplace")
    for form in [*secret_forms(), *plaintexts]:
        assert form not in raw, f"secret material in {text[:200]!r}"
