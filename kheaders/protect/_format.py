"""The protection format: header names, the two parameter structs, the authenticated data and
the signed bytes (docs/protect.md is the specification; tests/data/protect_vectors.json pins it).

Everything a protected record carries besides its value is in headers, so every component in
between (routing, tracing, dead-letter, mirror) reads the record without keys:

``kheaders.protect``    :class:`ProtectionHeader` (KIP-482 tagged struct): the value is
                        AEAD ciphertext made with these parameters
``kheaders.sign``       :class:`SignatureParams`: the record is signed with these parameters
``kheaders.signature``  the 64 signature bytes
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kheaders._codec.compact_types import write_compact_bytes, write_compact_string
from kheaders._codec.fieldtypes import BYTES, STRING, array
from kheaders._codec.struct import TaggedStruct, field
from kheaders._codec.varint import write_unsigned_varint
from kheaders._model.headerwire import encode_block

PROTECT_HEADER = "kheaders.protect"
SIGN_HEADER = "kheaders.sign"
SIGNATURE_HEADER = "kheaders.signature"
RESERVED_HEADERS = frozenset({PROTECT_HEADER, SIGN_HEADER, SIGNATURE_HEADER})
"""Header names the format owns: never bindable, never written twice."""

AES_256_GCM = "A256GCM"
"""AES-256 in Galois/Counter Mode: 32-byte key, 12-byte nonce, 16-byte tag after the text."""
ED25519 = "Ed25519"
"""Ed25519 (RFC 8032, pure): 32-byte private seed and public key, 64-byte signature."""

AAD_LABEL = b"kheaders.protect/0\n"
"""The first bytes of every authenticated-data string (domain separation)."""
SIGN_LABEL = b"kheaders.sign/0\n"
"""The first bytes of every signed string (domain separation)."""
NONCE_SIZE = 12
TAG_SIZE = 16
KEY_SIZE = 32
SIGNATURE_SIZE = 64


class ProtectionHeader(TaggedStruct, version=0):
    """The ``kheaders.protect`` header: how the value was encrypted, and what it is bound to."""

    alg = field(STRING)
    """The AEAD algorithm (``A256GCM``)."""
    kid = field(STRING)
    """The id of the key that encrypted the value (never the key)."""
    context = field(STRING)
    """What the record was protected for: by default the topic it was first produced to."""
    bound = field(array(STRING))
    """Names of the headers bound into the authenticated data."""
    nonce = field(BYTES)
    """The record's fresh 12-byte nonce."""


class SignatureParams(TaggedStruct, version=0):
    """The ``kheaders.sign`` header: who signed the record, and what the signature covers."""

    alg = field(STRING)
    """The signature algorithm (``Ed25519``)."""
    kid = field(STRING)
    """The id of the signing key (consumers hold its public key under this id)."""
    context = field(STRING)
    bound = field(array(STRING))


def header_prefix(alg: str, kid: str, context: str, bound: Sequence[str]) -> bytes:
    """The bytes of a :class:`ProtectionHeader` before its nonce; ``prefix + b"\\x0d" + nonce +
    b"\\x00"`` is the whole header (version 0, no tagged fields). Raises ValueError/TypeError
    as the struct's writer."""
    return b"".join(
        (
            write_unsigned_varint(ProtectionHeader.VERSION),
            STRING.write(alg),
            STRING.write(kid),
            STRING.write(context),
            array(STRING).write(list(bound)),
        )
    )


def bound_section(pairs: Iterable[tuple[str, bytes | None]], names: frozenset[str]) -> bytes:
    """The record-v2 header section of the pairs whose key is in ``names``, in record order,
    duplicates included (none at all is the section of zero headers: ``0x00``)."""
    return encode_block([(k, v) for k, v in pairs if k in names])


def aad(header: bytes, key: bytes | None, section: bytes) -> bytes:
    """The authenticated data of an encrypted value: the label, the ``kheaders.protect`` value
    as COMPACT_BYTES, the record key as COMPACT_NULLABLE_BYTES, the bound header section."""
    n = len(header)
    size = _LENGTHS[n] if n < _SHORT else write_unsigned_varint(n + 1)
    key_part = _NULL if key is None else write_compact_bytes(key)
    return b"".join((AAD_LABEL, size, header, key_part, section))


_SHORT = 127
_LENGTHS = tuple(bytes([n + 1]) for n in range(_SHORT))
"""The COMPACT_BYTES length prefix of ``n < 127`` bytes: one byte, ``n + 1``."""
_NULL = b"\x00"


def signed_bytes(params: bytes, key: bytes | None, value: bytes | None, section: bytes) -> bytes:
    """The bytes an Ed25519 signature covers: the label, the ``kheaders.sign`` value as
    COMPACT_BYTES, key and value (as on the wire: ciphertext when encrypted) as
    COMPACT_NULLABLE_BYTES, then the header section of the bound headers and any
    ``kheaders.protect`` header."""
    return b"".join(
        (SIGN_LABEL, write_compact_bytes(params), write_compact_bytes(key),
         write_compact_bytes(value), section)
    )  # fmt: skip


def check_bound(names: Iterable[str]) -> tuple[str, ...]:
    """The bound header names, checked: text, non-empty, not one of the format's own headers.

    Raises TypeError/ValueError naming the name at fault.
    """
    if isinstance(names, str):
        raise TypeError(f"bound header names must be a collection of names, not one str {names!r}")
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"a bound header name must be str, got {type(name).__name__}")
        if not name or name in RESERVED_HEADERS:
            raise ValueError(f"{name!r} cannot be a bound header name")
        if name not in out:
            out.append(name)
    return tuple(out)


def context_text(context: str) -> str:
    """``context`` checked as the struct will write it. Raises ValueError when it is empty or
    not encodable as UTF-8."""
    if not context:
        raise ValueError("the context must not be empty")
    write_compact_string(context)
    return context
