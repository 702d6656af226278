"""Protecting one record on the way out: encrypt the value, then sign what goes on the wire."""

from __future__ import annotations

import os
from collections.abc import Iterable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kheaders._errors import AlreadyProtectedError
from kheaders._model.headers import Headers
from kheaders._model.headerwire import encode_block
from kheaders.protect._crypto import KeyCache
from kheaders.protect._format import (
    AES_256_GCM,
    ED25519,
    NONCE_SIZE,
    PROTECT_HEADER,
    RESERVED_HEADERS,
    SIGN_HEADER,
    SIGNATURE_HEADER,
    SignatureParams,
    aad,
    check_bound,
    context_text,
    header_prefix,
    signed_bytes,
)

_NO_HEADERS = b"\x00"
"""The record-v2 header section of zero headers."""
_NONCE_LENGTH = bytes([NONCE_SIZE + 1])
"""COMPACT_BYTES length of a nonce."""
_NO_TAGS = b"\x00"
_KEPT = 1024
"""Encoded header prefixes a Sealer keeps, by key id and context (then starts again)."""


class Sealer:
    """Encrypts (with ``aead``) and/or signs (with ``signer``) records, binding ``bound``
    headers and the context (``context``, else the topic).

    Raises ValueError/TypeError at construction for a bad bound name or context.
    """

    __slots__ = ("_aead", "_bound", "_bound_set", "_context", "_prefixes", "_signed", "_signer")

    def __init__(
        self,
        aead: KeyCache[AESGCM] | None,
        signer: KeyCache[Ed25519PrivateKey] | None,
        bound: Iterable[str] = (),
        context: str | None = None,
    ) -> None:
        if aead is None and signer is None:
            raise ValueError("nothing to protect with: give an encryption or a signing keyring")
        self._aead = aead
        self._signer = signer
        self._bound = check_bound(bound)
        self._bound_set = frozenset(self._bound)
        self._context = None if context is None else context_text(context)
        self._prefixes: dict[tuple[str, str], bytes] = {}
        self._signed: dict[tuple[str, str], bytes] = {}

    def seal(
        self,
        topic: str,
        headers: Headers,
        key: bytes | None,
        value: bytes | None,
        nonce: bytes | None = None,
    ) -> bytes | None:
        """The value to send (ciphertext, or ``value`` when only signing or null); adds the
        protection headers to ``headers``. ``nonce`` is for test vectors only.

        Raises AlreadyProtectedError when ``headers`` already hold a protection header,
        UnknownKeyError/ValueError for the current key id, whatever the keyring raises.
        """
        bound: list[tuple[str, bytes | None]] = []
        names = self._bound_set
        for pair in headers:  # one pass: the bound pairs, and no protection header yet
            k = pair[0]
            if k in RESERVED_HEADERS:
                raise AlreadyProtectedError(
                    f"the record already has a {k!r} header: it would be protected twice"
                )
            if k in names:
                bound.append(pair)
        context = self._context if self._context is not None else topic
        if self._aead is not None and value is not None:
            value, header = self._encrypt(context, bound, key, value, nonce)
            headers.add(PROTECT_HEADER, header)
            bound.append((PROTECT_HEADER, header))  # the signature covers it too
        if self._signer is not None:
            self._sign(context, headers, bound, key, value)
        return value

    def _encrypt(
        self, context: str, bound: list[tuple[str, bytes | None]], key: bytes | None,
        value: bytes, nonce: bytes | None,
    ) -> tuple[bytes, bytes]:  # fmt: skip
        """The ciphertext and the ``kheaders.protect`` value."""
        aead = self._aead
        assert aead is not None
        kid = aead.keyring.current_id()
        cipher = aead.get(kid)
        prefix = self._prefixes.get((kid, context))
        if prefix is None:
            prefix = header_prefix(AES_256_GCM, kid, context, self._bound)
            if len(self._prefixes) >= _KEPT:
                self._prefixes.clear()
            self._prefixes[kid, context] = prefix
        if nonce is None:
            nonce = os.urandom(NONCE_SIZE)
        header = b"".join((prefix, _NONCE_LENGTH, nonce, _NO_TAGS))
        data = aad(header, key, encode_block(bound) if bound else _NO_HEADERS)
        return cipher.encrypt(nonce, value, data), header

    def _sign(
        self, context: str, headers: Headers, bound: list[tuple[str, bytes | None]],
        key: bytes | None, value: bytes | None,
    ) -> None:  # fmt: skip
        """Add the signature headers; ``bound`` holds the bound pairs and any protection
        header, in record order."""
        signer = self._signer
        assert signer is not None
        kid = signer.keyring.current_id()
        private = signer.get(kid)
        params = self._signed.get((kid, context))
        if params is None:
            params = SignatureParams(
                alg=ED25519, kid=kid, context=context, bound=list(self._bound)
            ).to_bytes()
            if len(self._signed) >= _KEPT:
                self._signed.clear()
            self._signed[kid, context] = params
        signature = private.sign(signed_bytes(params, key, value, encode_block(bound)))
        headers.add(SIGN_HEADER, params)
        headers.add(SIGNATURE_HEADER, signature)

    def __repr__(self) -> str:
        return (
            f"<Sealer encrypt={self._aead!r} sign={self._signer!r} bound={list(self._bound)}"
            f" context={self._context!r}>"
        )
