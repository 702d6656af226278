"""Checking one record on the way in: verify the signature, then decrypt the value.

Every refusal is an :class:`~kheaders.IntegrityError` whose message says what was wrong and
names the key id (as the record states it, escaped); never key bytes or the value.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TypeVar

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kheaders._errors import DecodeError, IntegrityError, UnknownKeyError
from kheaders._log import get_logger
from kheaders._model.headers import Headers
from kheaders._model.headerwire import encode_block
from kheaders._model.keys import shown
from kheaders._model.redact import printable
from kheaders.protect._crypto import KeyCache
from kheaders.protect._format import (
    AES_256_GCM,
    ED25519,
    NONCE_SIZE,
    PROTECT_HEADER,
    RESERVED_HEADERS,
    SIGN_HEADER,
    SIGNATURE_HEADER,
    SIGNATURE_SIZE,
    TAG_SIZE,
    ProtectionHeader,
    SignatureParams,
    aad,
    bound_section,
    header_prefix,
    signed_bytes,
)

Pairs = Iterable[tuple[str, bytes | None]]
K = TypeVar("K")
_SUFFIX = NONCE_SIZE + 2
"""A writer's ``kheaders.protect`` value ends with the nonce's length byte, the nonce and an
empty tagged-field section."""
_NONCE_LENGTH = NONCE_SIZE + 1
_NO_HEADERS = b"\x00"
_HEADERS_KEPT = 256
"""Decoded header prefixes an Opener keeps (then starts again)."""
_TOPICS_KEPT = 1024
"""Topics an Opener remembers having warned about (then starts again)."""
_log = get_logger("kheaders.protect")


def refused(reason: str) -> IntegrityError:
    """The IntegrityError for a refused record (the consumer adds where it was)."""
    return IntegrityError(f"protected record refused: {reason}", message=None, field="value")


@dataclass(frozen=True, slots=True)
class Marks:
    """The format's headers of one record (each at most once)."""

    protect: bytes | None = None
    sign: bytes | None = None
    signature: bytes | None = None

    @classmethod
    def of(cls, pairs: Pairs) -> Marks:
        """Collect them. Raises IntegrityError for one present twice (or null)."""
        seen: dict[str, bytes] = {}
        for k, v in pairs:
            if k in RESERVED_HEADERS:
                if k in seen:
                    raise refused(f"header {k!r} appears more than once (protected twice?)")
                if v is None:
                    raise refused(f"header {k!r} is null")
                seen[k] = v
        if not seen:
            return _NONE
        return cls(seen.get(PROTECT_HEADER), seen.get(SIGN_HEADER), seen.get(SIGNATURE_HEADER))


_NONE = Marks()


def parse_protection(raw: bytes) -> ProtectionHeader:
    """Decode a ``kheaders.protect`` value. Raises IntegrityError: malformed, newer version,
    unknown algorithm, bad nonce size."""
    try:
        header = ProtectionHeader.from_bytes(raw)
    except DecodeError as exc:
        raise refused(f"malformed {PROTECT_HEADER!r} header: {exc}") from None
    if header.alg != AES_256_GCM:
        raise refused(f"unknown algorithm {shown(header.alg)} (kid={shown(header.kid)})")
    if len(header.nonce) != NONCE_SIZE:
        raise refused(
            f"nonce of {len(header.nonce)} bytes, {NONCE_SIZE} needed (kid={shown(header.kid)})"
        )
    return header


def parse_params(raw: bytes) -> SignatureParams:
    """Decode a ``kheaders.sign`` value. Raises IntegrityError: malformed, newer version,
    unknown algorithm."""
    try:
        params = SignatureParams.from_bytes(raw)
    except DecodeError as exc:
        raise refused(f"malformed {SIGN_HEADER!r} header: {exc}") from None
    if params.alg != ED25519:
        raise refused(f"unknown signature algorithm {shown(params.alg)} (kid={shown(params.kid)})")
    return params


class Opener:
    """Verifies (with ``verifier``) and decrypts (with ``aead``) records read in an accepted
    context (``contexts``, else the topic read). ``require_signature`` / ``require_encryption``
    refuse records without them; a tombstone (null value) needs no encryption. Without a
    ``verifier``, signed records are opened unchecked and, with ``warn_unverified``, the first
    one of each topic logs ``protect.signature_not_verified`` (a warning).
    """

    __slots__ = (
        "_aead",
        "_contexts",
        "_headers",
        "_verifier",
        "_warned",
        "require_encryption",
        "require_signature",
    )

    def __init__(
        self,
        aead: KeyCache[AESGCM] | None,
        verifier: KeyCache[Ed25519PublicKey] | None,
        contexts: Collection[str] | None = None,
        *,
        require_encryption: bool,
        require_signature: bool,
        warn_unverified: bool = False,
    ) -> None:
        self._aead = aead
        self._verifier = verifier
        self._contexts = None if contexts is None else frozenset(contexts)
        self._headers: dict[bytes, tuple[str, str, frozenset[str]]] = {}
        self._warned: set[str] | None = set() if warn_unverified and verifier is None else None
        self.require_encryption = require_encryption
        self.require_signature = require_signature

    def open(
        self, topic: str, pairs: Iterable[tuple[str, bytes | None]], key: bytes | None,
        value: bytes | None,
    ) -> bytes | None:  # fmt: skip
        """The plaintext value of a record read from ``topic``. Raises IntegrityError."""
        pairs = pairs.to_list() if type(pairs) is Headers else list(pairs)  # plain tuples
        if self._aead is not None and value is not None and not self.require_signature:
            plain = self._usual(topic, pairs, key, value)
            if plain is not None:
                return plain
        return self._checked(topic, pairs, key, value)

    def _usual(
        self, topic: str, pairs: list[tuple[str, bytes | None]], key: bytes | None, value: bytes
    ) -> bytes | None:
        """The plaintext of the usual record (one ``kheaders.protect`` header laid out as a
        known writer lays it out, no signature headers), or ``None``: then :meth:`_checked`
        decides, and says why it refuses. The same checks as :meth:`_decrypt`, inline."""
        raw = None
        for k, v in pairs:
            if k in RESERVED_HEADERS:
                if k != PROTECT_HEADER or raw is not None:
                    return None
                raw = v
        if raw is None or len(raw) <= _SUFFIX or raw[-_SUFFIX] != _NONCE_LENGTH or raw[-1]:
            return None
        known = self._headers.get(raw[:-_SUFFIX])
        if known is None or len(value) < TAG_SIZE:
            return None
        key_id, context, bound = known
        if context != topic if self._contexts is None else context not in self._contexts:
            return None
        try:
            cipher = self._aead.get(key_id)  # type: ignore[union-attr]  # checked by open()
        except (UnknownKeyError, ValueError):
            return None
        section = encode_block([p for p in pairs if p[0] in bound]) if bound else _NO_HEADERS
        try:
            return cipher.decrypt(raw[-_SUFFIX + 1 : -1], value, aad(raw, key, section))
        except InvalidTag:
            return None

    def _checked(
        self, topic: str, pairs: list[tuple[str, bytes | None]], key: bytes | None,
        value: bytes | None,
    ) -> bytes | None:  # fmt: skip
        """:meth:`open` for any record, each check in turn. Raises IntegrityError."""
        marks = Marks.of(pairs)
        if marks.sign is not None or marks.signature is not None:
            if self._verifier is not None:
                self._verify(topic, marks, pairs, key, value)
            elif self._warned is not None and topic not in self._warned:
                self._warn_unverified(topic, marks)
        elif self.require_signature:
            raise refused("not signed, and a signature is required")
        if marks.protect is None:
            if value is not None and self.require_encryption:
                raise refused("not encrypted, and encryption is required")
            return value
        return self._decrypt(topic, marks.protect, pairs, key, value)

    def _warn_unverified(self, topic: str, marks: Marks) -> None:
        """Say once per topic that its signed records are read unchecked."""
        warned = self._warned
        assert warned is not None
        if len(warned) >= _TOPICS_KEPT:
            warned.clear()
        warned.add(topic)
        try:
            kid: str | None = printable(parse_params(marks.sign).kid) if marks.sign else None
        except IntegrityError:
            kid = None
        _log.warning(
            "protect.signature_not_verified",
            topic=topic,
            kid=kid,
            reason="this topic's records are signed, but this reader holds no verify keys, so"
            " who wrote them is not checked (a forged or altered signature is accepted too)",
            fix="pass verify_keyring= (or set KHEADERS_PROTECT_VERIFY_KEYS) to check them, or"
            " require_signature=False to read them unchecked without this warning",
        )

    def __repr__(self) -> str:
        contexts = "the topic read" if self._contexts is None else sorted(self._contexts)
        return (
            f"<Opener decrypt={self._aead!r} verify={self._verifier!r} contexts={contexts}"
            f" require_encryption={self.require_encryption}"
            f" require_signature={self.require_signature}>"
        )

    def _accept(self, context: str, topic: str, kid: str) -> None:
        if context != topic if self._contexts is None else context not in self._contexts:
            raise refused(
                f"protected for context {shown(context)}, which this reader does not accept"
                f" (kid={shown(kid)})"
            )

    def _verify(
        self, topic: str, marks: Marks, pairs: list[tuple[str, bytes | None]],
        key: bytes | None, value: bytes | None,
    ) -> None:  # fmt: skip
        params = signature_params(marks)
        self._accept(params.context, topic, params.kid)
        assert self._verifier is not None
        check_signature(params, marks, pairs, key, value, self._verifier)

    def _parsed(self, raw: bytes) -> tuple[str, str, frozenset[str], bytes]:
        """Key id, context, bound names and nonce of a ``kheaders.protect`` value.

        Headers of one writer differ in their nonce only: a value laid out as the writer lays
        it out (``prefix, 0x0d, nonce, 0x00``) whose prefix was fully decoded before decodes
        to the same fields, so the decoded fields are kept by prefix. Raises IntegrityError.
        """
        if len(raw) > _SUFFIX and raw[-_SUFFIX] == _NONCE_LENGTH and raw[-1] == 0:
            known = self._headers.get(raw[:-_SUFFIX])
            if known is not None:
                return (*known, raw[-_SUFFIX + 1 : -1])
        header = parse_protection(raw)
        fields = (header.kid, header.context, frozenset(header.bound))
        canonical = header_prefix(header.alg, header.kid, header.context, header.bound)
        if raw[:-_SUFFIX] == canonical and raw[-_SUFFIX] == _NONCE_LENGTH and raw[-1] == 0:
            if len(self._headers) >= _HEADERS_KEPT:
                self._headers.clear()
            self._headers[canonical] = fields
        return (*fields, header.nonce)

    def _decrypt(
        self, topic: str, raw: bytes, pairs: list[tuple[str, bytes | None]],
        key: bytes | None, value: bytes | None,
    ) -> bytes:  # fmt: skip
        key_id, context, bound, nonce = self._parsed(raw)
        self._accept(context, topic, key_id)
        if self._aead is None:
            raise refused(
                f"encrypted (kid={shown(key_id)}), and this reader has no encryption keyring"
            )
        cipher = _key(self._aead, key_id)
        if value is None:
            raise refused(f"encrypted, but its value is null (kid={shown(key_id)})")
        if len(value) < TAG_SIZE:
            raise refused(
                f"value of {len(value)} bytes is too short to hold the {TAG_SIZE}-byte tag"
                f" (kid={shown(key_id)})"
            )
        data = aad(raw, key, bound_section(pairs, bound) if bound else _NO_HEADERS)
        try:
            return cipher.decrypt(nonce, value, data)
        except InvalidTag:
            raise refused(
                f"does not decrypt (kid={shown(key_id)}, alg={AES_256_GCM}): the key, value,"
                " nonce, a bound header or the protection header was altered, or the key is not"
                " the one that encrypted it"
            ) from None


def _key(cache: KeyCache[K], key_id: str) -> K:
    try:
        return cache.get(key_id)
    except UnknownKeyError:
        raise refused(f"unknown {cache.purpose} key id {shown(key_id)}") from None
    except ValueError:
        raise refused(f"the {cache.purpose} key under id {shown(key_id)} is not usable") from None


def signature_params(marks: Marks) -> SignatureParams:
    """The parameters of a signed record. Raises IntegrityError: a signature header without
    the other, malformed parameters, an unknown algorithm."""
    if marks.sign is None or marks.signature is None:
        missing = SIGN_HEADER if marks.sign is None else SIGNATURE_HEADER
        raise refused(f"signed, but its {missing!r} header is missing")
    return parse_params(marks.sign)


def check_signature(  # noqa: PLR0917 - a record's parts
    params: SignatureParams, marks: Marks, pairs: list[tuple[str, bytes | None]],
    key: bytes | None, value: bytes | None, verifier: KeyCache[Ed25519PublicKey],
) -> None:  # fmt: skip
    """Verify a record's signature (its context is the caller's to accept).
    Raises IntegrityError: unknown key id, bad signature."""
    kid = shown(params.kid)
    public = _key(verifier, params.kid)
    signature = marks.signature or b""
    if len(signature) != SIGNATURE_SIZE:
        raise refused(f"signature of {len(signature)} bytes (kid={kid})")
    names = frozenset(params.bound) | {PROTECT_HEADER}
    data = signed_bytes(marks.sign or b"", key, value, bound_section(pairs, names))
    try:
        public.verify(signature, data)
    except InvalidSignature:
        raise refused(
            f"bad signature (kid={kid}): the key, value, a bound header, the context"
            " or the signature was altered, or another key signed it"
        ) from None


def verify_signature(
    pairs: Pairs, key: bytes | None, value: bytes | None, verifier: KeyCache[Ed25519PublicKey]
) -> str:
    """``valid (kid=..., context=...)`` for a record whose signature verifies, in any context
    (for ``kheaders tail``). Raises IntegrityError as a reader would, ``not signed`` too."""
    listed = list(pairs)
    marks = Marks.of(listed)
    if marks.sign is None and marks.signature is None:
        raise refused("not signed")
    params = signature_params(marks)
    check_signature(params, marks, listed, key, value, verifier)
    return f"valid (kid={printable(params.kid)}, context={printable(params.context)})"


def describe(pairs: Pairs) -> str | None:
    """``<encrypted kid=... alg=...>`` for a record with one readable ``kheaders.protect``
    header, ``<protected: ...>`` when it is malformed, ``None`` when there is none (for
    ``kheaders tail``; reads headers only)."""
    try:
        marks = Marks.of(pairs)
        if marks.protect is None:
            return None
        header = parse_protection(marks.protect)
    except IntegrityError as exc:
        return f"<protected, unreadable: {printable(str(exc))}>"
    return f"<encrypted kid={printable(header.kid)} alg={printable(header.alg)}>"
