"""The primitives, built once per key id from a keyring (``cryptography``'s AES-GCM and Ed25519).

A :class:`KeyCache` asks its keyring for a key id's bytes once and keeps only the object built
from them. Errors name the key id, never the bytes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kheaders._errors import UnknownKeyError
from kheaders.protect._format import KEY_SIZE
from kheaders.protect._keys import Keyring

K = TypeVar("K")


class KeyCache(Generic[K]):
    """Key id → the primitive built from the keyring's key; ``repr`` shows key ids only.

    Raises UnknownKeyError for an id the keyring does not hold, ValueError (naming the id and
    the length needed) for a key of the wrong size.
    """

    __slots__ = ("_build", "_built", "_lock", "keyring", "purpose")

    def __init__(self, keyring: Keyring, build: Callable[[bytes], K], purpose: str) -> None:
        self.keyring = keyring
        self.purpose = purpose
        self._build = build
        self._built: dict[str, K] = {}
        self._lock = threading.Lock()

    def get(self, key_id: str) -> K:
        """The primitive for ``key_id``. Raises as the class says."""
        try:
            return self._built[key_id]
        except KeyError:
            pass
        raw = self.keyring.key(key_id)
        if raw is None:
            raise UnknownKeyError(f"no {self.purpose} key with id {key_id!r}")
        if len(raw) != KEY_SIZE:
            raise ValueError(
                f"{self.purpose} key {key_id!r} has {len(raw)} bytes; it needs {KEY_SIZE}"
            )
        built = self._build(bytes(raw))
        with self._lock:
            self._built[key_id] = built
        return built

    def __repr__(self) -> str:
        return f"<{self.purpose} keys {list(self._built)} of {self.keyring!r}>"


def aead_keys(keyring: Keyring) -> KeyCache[AESGCM]:
    """AES-256-GCM ciphers by key id."""
    return KeyCache(keyring, AESGCM, "encryption")


def signing_keys(keyring: Keyring) -> KeyCache[Ed25519PrivateKey]:
    """Ed25519 private keys (from 32-byte seeds) by key id."""
    return KeyCache(keyring, Ed25519PrivateKey.from_private_bytes, "signing")


def verify_keys(keyring: Keyring) -> KeyCache[Ed25519PublicKey]:
    """Ed25519 public keys (32 raw bytes) by key id."""
    return KeyCache(keyring, Ed25519PublicKey.from_public_bytes, "verification")


def public_key_of(seed: bytes) -> bytes:
    """The 32 raw public-key bytes of an Ed25519 private seed (for consumers' keyrings)."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return (
        Ed25519PrivateKey.from_private_bytes(seed)
        .public_key()
        .public_bytes(Encoding.Raw, PublicFormat.Raw)
    )
