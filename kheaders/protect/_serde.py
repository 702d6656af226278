"""The serializer and deserializer wrappers that protect record values (see docs/protect.md).

The protection binds the record key. :class:`ProtectedSerializer` reads it from the
:class:`~kheaders.SerializationContext` a kheaders producer gives each value serializer call
(the key as sent), and :class:`ProtectedDeserializer` from the one a kheaders consumer gives
each value deserializer call (the key as consumed): nothing passes between calls or threads.
:class:`RecordKeySerializer` and :class:`RecordKeyDeserializer` are no longer needed and only
run the key (de)serializer they wrap, for the configs that name them. A call without a
context (outside a kheaders client) is refused, so the key is never left unbound.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable
from typing import Any

from kheaders._errors import ConfigurationError
from kheaders._model.headers import Headers
from kheaders._serde.protocols import SerializationContext
from kheaders.protect._crypto import aead_keys, signing_keys, verify_keys
from kheaders.protect._keys import (
    KEYS_ENV,
    SIGNING_KEYS_ENV,
    VERIFY_KEYS_ENV,
    Keyring,
    env_keyring,
)
from kheaders.protect._open import Opener, refused
from kheaders.protect._seal import Sealer

BOUND_ENV = "KHEADERS_PROTECT_BOUND_HEADERS"
"""Comma-separated bound header names, for a ProtectedSerializer built with no arguments."""
CONTEXT_ENV = "KHEADERS_PROTECT_CONTEXT"
"""The context a ProtectedSerializer built with no arguments writes (default: the topic)."""
CONTEXTS_ENV = "KHEADERS_PROTECT_CONTEXTS"
"""Comma-separated contexts a ProtectedDeserializer built with no arguments accepts."""

_NO_CONTEXT_CONSUMED = (
    "the record key is bound into its protection, but this call has no record context:"
    " a kheaders consumer passes one; outside a consumer call"
    " deserialize(topic, headers, data, context=SerializationContext(topic, headers, key,"
    " 'value')) with the record's key bytes"
)
_NO_CONTEXT = (
    "the record key is bound into its protection, but this call has no record context:"
    " a kheaders producer passes one; outside a producer call"
    " serialize(topic, headers, data, context=SerializationContext(topic, headers, key,"
    " 'value'))"
)


def _key_bytes(key: object) -> bytes | None:
    if key is None or type(key) is bytes:
        return key
    if isinstance(key, str):
        return key.encode("utf-8")  # as librdkafka sends a str key
    if isinstance(key, bytes | bytearray | memoryview):
        return bytes(key)
    raise TypeError(f"a record key must be bytes, str or None, got {type(key).__name__}")


def _method(inner: object, name: str) -> Callable[..., Any] | None:
    if inner is None:
        return None
    if isinstance(inner, type):
        inner = inner()
    bound = getattr(inner, name, None)
    if not callable(bound):
        raise ConfigurationError(f"{inner!r} has no {name}(topic, headers, data)")
    return bound  # type: ignore[no-any-return]


def _given_or_env(keyring: Keyring | None, variable: str) -> Keyring | None:
    """``keyring`` when one is passed, else the keys environment variable ``variable`` holds
    (``None`` when it is unset): each role's keys come from the environment unless passed, so
    passing one keyring never drops another the deployment configured."""
    return keyring if keyring is not None else env_keyring(variable)


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (text or "").split(",") if p.strip())


class RecordKeySerializer:
    """The key serializer of a protecting producer, kept for the configs that name it: runs
    ``inner`` (if any), or passes the key on as given. :class:`ProtectedSerializer` reads the
    key from its record's context, so a producer needs no key wrapper any more."""

    __slots__ = ("_inner",)

    def __init__(self, inner: object = None) -> None:
        self._inner = _method(inner, "serialize")

    def serialize(self, topic: str, headers: Headers, data: Any) -> bytes | None:
        """The key as ``inner`` serializes it (or as given)."""
        return data if self._inner is None else self._inner(topic, headers, data)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"RecordKeySerializer({self._inner!r})"


class RecordKeyDeserializer:
    """The key deserializer of a protected consumer, kept for the configs that name it: runs
    ``inner`` (if any), or passes the key bytes on. :class:`ProtectedDeserializer` reads the
    key from its record's context, so a consumer needs no key wrapper any more."""

    __slots__ = ("_inner",)

    def __init__(self, inner: object = None) -> None:
        self._inner = _method(inner, "deserialize")

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> Any:
        """The key as ``inner`` deserializes it (or the raw bytes)."""
        return data if self._inner is None else self._inner(topic, headers, data)

    def __repr__(self) -> str:
        return f"RecordKeyDeserializer({self._inner!r})"


class ProtectedSerializer:
    """A value serializer that encrypts (AES-256-GCM, ``keyring``'s current key) and/or signs
    (Ed25519, ``signing_keyring``'s current key) what ``inner`` serializes (or the bytes
    given), binding the record key, ``bound_headers`` and ``context`` (default: the topic).

    Each of ``keyring``, ``signing_keyring``, ``bound_headers`` and ``context`` left out (or
    ``None``) is read from ``KHEADERS_PROTECT_KEYS``, ``KHEADERS_PROTECT_SIGNING_KEYS``,
    ``KHEADERS_PROTECT_BOUND_HEADERS`` and ``KHEADERS_PROTECT_CONTEXT`` when set, so it can
    be named in config as a dotted path, and passing one keyring never drops encryption or
    signing the environment configures. A null value stays null (it is still signed). The
    record key comes from the producer's :class:`~kheaders.SerializationContext`.
    Raises ConfigurationError with no keys at all; per record, LookupError when called without
    a context, ValueError for a record already protected, TypeError for a value that is not
    bytes or a key that is not bytes, str or None (the producer reports each as a
    SerializationError).
    """

    __slots__ = ("_inner", "_sealer")

    def __init__(
        self,
        inner: object = None,
        *,
        keyring: Keyring | None = None,
        signing_keyring: Keyring | None = None,
        bound_headers: Iterable[str] | None = None,
        context: str | None = None,
    ) -> None:
        keyring = _given_or_env(keyring, KEYS_ENV)
        signing_keyring = _given_or_env(signing_keyring, SIGNING_KEYS_ENV)
        if bound_headers is None:
            bound_headers = _names(os.environ.get(BOUND_ENV))
        if context is None:
            context = os.environ.get(CONTEXT_ENV) or None
        if keyring is None and signing_keyring is None:
            raise ConfigurationError(
                f"ProtectedSerializer: no keys: pass keyring= or signing_keyring=, or set"
                f" {KEYS_ENV} or {SIGNING_KEYS_ENV}"
            )
        self._inner = _method(inner, "serialize")
        try:
            self._sealer = Sealer(
                None if keyring is None else aead_keys(keyring),
                None if signing_keyring is None else signing_keys(signing_keyring),
                bound_headers,
                context,
            )
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"ProtectedSerializer: {exc}") from exc

    def serialize(
        self,
        topic: str,
        headers: Headers,
        data: Any,
        *,
        context: SerializationContext | None = None,
    ) -> bytes | None:
        """The protected value, bound to ``context.key``; adds the protection headers. Raises
        as the class says."""
        if context is None:
            raise LookupError(_NO_CONTEXT)
        key = _key_bytes(context.key)
        value = data if self._inner is None else self._inner(topic, headers, data)
        if value is not None and type(value) is not bytes:
            if not isinstance(value, bytes | bytearray | memoryview):
                raise TypeError(f"a value to protect must be bytes, got {type(value).__name__}")
            value = bytes(value)
        return self._sealer.seal(topic, headers, key, value)

    def __repr__(self) -> str:
        return f"ProtectedSerializer({self._inner!r}, {self._sealer!r})"


class ProtectedDeserializer:
    """A value deserializer that verifies and decrypts protected records, then runs ``inner``
    (if any) on the plaintext.

    ``keyring`` decrypts (records must then be encrypted, tombstones aside, unless
    ``require_encryption=False``); ``verify_keyring`` holds Ed25519 public keys (records must
    then be signed, unless ``require_signature=False``). ``contexts`` are the contexts
    accepted (default: the topic read), e.g. the original topic for a dead-letter reader.
    Each of ``keyring``, ``verify_keyring`` and ``contexts`` left out (or ``None``) is read
    from ``KHEADERS_PROTECT_KEYS``, ``KHEADERS_PROTECT_VERIFY_KEYS`` and
    ``KHEADERS_PROTECT_CONTEXTS`` when set (and then required as above). Without verify
    keys, signed records are read unchecked, and the first of each topic logs the warning
    ``protect.signature_not_verified`` unless ``require_signature=False`` says that is
    meant. The record key comes from the context a kheaders consumer gives each call.
    Raises ConfigurationError with no keys at all, and for ``require_signature=True``
    without verify keys or ``require_encryption=True`` without keys; per record
    IntegrityError (the consumer raises it naming topic, partition and offset, with the raw
    record).
    """

    __slots__ = ("_inner", "_opener")

    def __init__(
        self,
        inner: object = None,
        *,
        keyring: Keyring | None = None,
        verify_keyring: Keyring | None = None,
        contexts: Collection[str] | None = None,
        require_encryption: bool | None = None,
        require_signature: bool | None = None,
    ) -> None:
        keyring = _given_or_env(keyring, KEYS_ENV)
        verify_keyring = _given_or_env(verify_keyring, VERIFY_KEYS_ENV)
        if contexts is None:
            contexts = _names(os.environ.get(CONTEXTS_ENV)) or None
        if keyring is None and verify_keyring is None:
            raise ConfigurationError(
                f"ProtectedDeserializer: no keys: pass keyring= or verify_keyring=, or"
                f" set {KEYS_ENV} or {VERIFY_KEYS_ENV}"
            )
        if isinstance(contexts, str) or (contexts is not None and not contexts):
            raise ConfigurationError(
                "contexts must be a non-empty collection of names (not one str); None accepts"
                " the topic read"
            )
        if require_signature and verify_keyring is None:
            raise ConfigurationError(
                "ProtectedDeserializer: require_signature=True needs verify keys to check"
                f" signatures with: pass verify_keyring= or set {VERIFY_KEYS_ENV}"
            )
        if require_encryption and keyring is None:
            raise ConfigurationError(
                "ProtectedDeserializer: require_encryption=True needs keys to decrypt with:"
                f" pass keyring= or set {KEYS_ENV}"
            )
        self._inner = _method(inner, "deserialize")
        self._opener = Opener(
            None if keyring is None else aead_keys(keyring),
            None if verify_keyring is None else verify_keys(verify_keyring),
            contexts,
            require_encryption=keyring is not None
            if require_encryption is None
            else require_encryption,
            require_signature=verify_keyring is not None
            if require_signature is None
            else require_signature,
            warn_unverified=require_signature is None,
        )

    def deserialize(
        self,
        topic: str,
        headers: Headers,
        data: bytes | None,
        *,
        context: SerializationContext | None = None,
    ) -> Any:
        """The plaintext value, bound to ``context.key`` (the key as consumed), deserialized
        by ``inner``. Raises IntegrityError (also for a call without a context)."""
        if context is None:
            raise refused(_NO_CONTEXT_CONSUMED)
        try:
            key = _key_bytes(context.key)
        except TypeError as exc:
            raise refused(str(exc)) from None
        value = self._opener.open(topic, headers, key, data)
        return value if self._inner is None else self._inner(topic, headers, value)

    def __repr__(self) -> str:
        return f"ProtectedDeserializer({self._inner!r}, {self._opener!r})"
