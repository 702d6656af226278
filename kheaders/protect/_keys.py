"""Keyrings: key id → key bytes, and the id of the key that writes. Keys never leave them in text.

A key id travels in headers and messages; a key never does. Every keyring's ``repr`` shows its
key ids only, and every error here names a key id, a setting or a file, never key bytes.
"""

from __future__ import annotations

import base64
import binascii
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol, runtime_checkable

from kheaders._errors import ConfigurationError

KEYS_ENV = "KHEADERS_PROTECT_KEYS"
"""Encryption keys for :meth:`StaticKeyring.from_env`: ``kid:base64[,kid:base64...]``."""
SIGNING_KEYS_ENV = "KHEADERS_PROTECT_SIGNING_KEYS"
"""Ed25519 private seeds, same form: producers sign with the current one."""
VERIFY_KEYS_ENV = "KHEADERS_PROTECT_VERIFY_KEYS"
"""Ed25519 public keys, same form: consumers verify with them (and then require signatures)."""
CURRENT_SUFFIX = "_CURRENT"
"""``KHEADERS_PROTECT_KEYS_CURRENT`` names the current key id (default: the last listed)."""
KEY_FILE_SUFFIX = ".key"
CURRENT_FILE = "current"


@runtime_checkable
class Keyring(Protocol):
    """Key id → key bytes (``None`` when unknown), and the id of the key that writes now.

    Implement it to fetch keys from a KMS: ``key`` is called once per key id by a protector
    (which caches what it builds from the key), ``current_id`` once per record, so a keyring
    rotates by answering a new id. Neither may put key bytes in an exception message.
    """

    def current_id(self) -> str: ...

    def key(self, key_id: str) -> bytes | None: ...


class StaticKeyring:
    """Keys held in memory; the current one is the last added unless named.

    Rotation: :meth:`add` a new key (it becomes current); older ones still read. ``repr`` shows
    key ids only. Raises ConfigurationError for no keys, a current id it does not hold, a key
    that is not bytes, or a key id that is empty or not text.
    """

    __slots__ = ("_current", "_keys", "_lock")

    def __init__(self, keys: Mapping[str, bytes], current: str | None = None) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, bytes] = {}
        for key_id, key in keys.items():
            self._put(key_id, key)
        if not self._keys:
            raise ConfigurationError("a keyring needs at least one key")
        ids = list(self._keys)
        chosen = ids[-1] if current is None else current
        if chosen not in self._keys:
            raise ConfigurationError(f"current key id {chosen!r} is not in the keyring {ids}")
        self._current = chosen

    def _put(self, key_id: str, key: bytes) -> None:
        if not isinstance(key_id, str) or not key_id:
            raise ConfigurationError(f"a key id must be non-empty text, got {key_id!r}")
        if not isinstance(key, bytes | bytearray):
            raise ConfigurationError(f"key {key_id!r} must be bytes, got {type(key).__name__}")
        self._keys[key_id] = bytes(key)

    def add(self, key_id: str, key: bytes, *, current: bool = True) -> None:
        """Hold ``key`` under ``key_id``, as the current key unless ``current=False``.

        Raises ConfigurationError as the constructor, and for a key id already held with
        other bytes (a key id names one key for ever: records carry it).
        """
        with self._lock:
            old = self._keys.get(key_id)
            if old is not None and old != key:
                raise ConfigurationError(f"key id {key_id!r} already names another key")
            self._put(key_id, key)
            if current:
                self._current = key_id

    def current_id(self) -> str:
        """The id of the key that writes."""
        return self._current

    def key(self, key_id: str) -> bytes | None:
        """The key held under ``key_id``, or ``None``."""
        return self._keys.get(key_id)

    @property
    def key_ids(self) -> tuple[str, ...]:
        """The ids held, oldest first."""
        return tuple(self._keys)

    def __repr__(self) -> str:
        return f"<StaticKeyring key ids {list(self._keys)}, current {self._current!r}>"

    # -- built from text, config, the environment, files ------------------------------------

    @classmethod
    def from_text(
        cls, text: str, current: str | None = None, *, source: str = "keys"
    ) -> StaticKeyring:
        """Keys written ``kid:base64[,kid:base64...]`` (whitespace ignored).

        Raises ConfigurationError naming ``source`` and the entry's key id (never its bytes).
        """
        keys: dict[str, bytes] = {}
        for n, entry in enumerate(p.strip() for p in text.split(",")):
            if not entry:
                continue
            key_id, sep, encoded = entry.partition(":")
            key_id = key_id.strip()
            if not sep or not key_id:
                raise ConfigurationError(f"{source}: entry {n + 1} is not 'kid:base64'")
            keys[key_id] = _decoded(encoded, f"{source}: key {key_id!r}")
        return cls(keys, current)

    @classmethod
    def from_config(
        cls, config: Mapping[str, object], prefix: str = "protect.keys."
    ) -> StaticKeyring:
        """Keys from an application's settings: ``<prefix><kid>`` = base64 text; the current
        id from ``<prefix>current`` (default: the last). Other settings are ignored.

        Raises ConfigurationError naming the setting.
        """
        keys: dict[str, bytes] = {}
        current: str | None = None
        for name, value in config.items():
            if not isinstance(name, str) or not name.startswith(prefix):
                continue
            key_id = name[len(prefix) :]
            if not isinstance(value, str):
                raise ConfigurationError(f"setting {name!r} must be base64 text")
            if key_id == CURRENT_FILE:
                current = value.strip()
            else:
                keys[key_id] = _decoded(value, f"setting {name!r}")
        return cls(keys, current)

    @classmethod
    def from_env(cls, name: str = KEYS_ENV) -> StaticKeyring:
        """Keys from environment variable ``name`` (``kid:base64,...``), the current id from
        ``<name>_CURRENT`` (default: the last listed).

        Raises ConfigurationError naming the variable when it is unset or malformed.
        """
        text = os.environ.get(name)
        if text is None:
            raise ConfigurationError(f"environment variable {name} is not set")
        if not text.replace(",", "").strip():
            raise ConfigurationError(
                f"environment variable {name} is set but holds no keys: unset it, or give"
                " kid:base64[,kid:base64...]"
            )
        current = os.environ.get(name + CURRENT_SUFFIX) or None
        return cls.from_text(text, current, source=f"environment variable {name}")

    @classmethod
    def from_directory(cls, directory: str | os.PathLike[str]) -> StaticKeyring:
        """Keys from files ``<kid>.key`` (base64 text) in ``directory``; the current id from
        its ``current`` file (default: the last key id in sorted order).

        Raises ConfigurationError naming the directory or file.
        """
        path = Path(directory)
        if not path.is_dir():
            raise ConfigurationError(f"key directory {str(path)!r} does not exist")
        keys: dict[str, bytes] = {}
        for file in sorted(path.glob("*" + KEY_FILE_SUFFIX)):
            key_id = file.name[: -len(KEY_FILE_SUFFIX)]
            keys[key_id] = _decoded(file.read_text("ascii", "replace"), f"key file {file.name!r}")
        current_file = path / CURRENT_FILE
        current = current_file.read_text("utf-8").strip() if current_file.is_file() else None
        if not keys:
            raise ConfigurationError(f"key directory {str(path)!r} holds no *.key files")
        return cls(keys, current)


class CachingKeyring:
    """A keyring over a user's KMS hook: ``fetch(kid)`` returns the (unwrapped) key or ``None``
    and is called once per key id; ``current()`` names the writing key id.

    ``repr`` shows the key ids fetched so far, never keys. What ``fetch`` raises propagates
    (a producer turns it into a SerializationError, a consumer into a DeserializationError).
    """

    __slots__ = ("_cache", "_current", "_fetch", "_lock")

    def __init__(self, fetch: Callable[[str], bytes | None], current: Callable[[], str]) -> None:
        self._fetch = fetch
        self._current = current
        self._cache: dict[str, bytes | None] = {}
        self._lock = threading.Lock()

    def current_id(self) -> str:
        """The writing key id, as the hook says."""
        return self._current()

    def key(self, key_id: str) -> bytes | None:
        """The key for ``key_id``, fetched once."""
        try:
            return self._cache[key_id]
        except KeyError:
            pass
        with self._lock:
            if key_id not in self._cache:
                self._cache[key_id] = self._fetch(key_id)
            return self._cache[key_id]

    def __repr__(self) -> str:
        return f"<CachingKeyring key ids fetched {list(self._cache)}>"


def _decoded(text: str, what: str) -> bytes:
    """Base64 (standard or URL-safe, padding optional) to bytes. Raises ConfigurationError
    naming ``what`` only."""
    cleaned = "".join(text.split()).replace("-", "+").replace("_", "/")
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        key = base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigurationError(f"{what} is not valid base64") from None
    if not key:
        raise ConfigurationError(f"{what} is empty")
    return key


def env_keyring(name: str) -> StaticKeyring | None:
    """:meth:`StaticKeyring.from_env` when ``name`` is set, else ``None``.

    A variable set but empty is refused (ConfigurationError), not read as unset: it is what a
    secret that failed to reach the deployment looks like, and reading it as "no keys" would
    turn the encryption or verification it configures off in silence.
    """
    if name in os.environ:
        return StaticKeyring.from_env(name)
    return None
