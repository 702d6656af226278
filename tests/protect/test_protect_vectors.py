"""The committed test vectors pin the format: the code reproduces them byte for byte, and a
reader written from docs/protect.md alone (below, sharing no code with kheaders.protect)
decrypts and verifies them."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from kheaders.protect import ProtectedDeserializer, StaticKeyring
from tests.protect.helpers import unprotect
from tests.protect.make_vectors import PATH, compute

VECTORS: dict[str, Any] = json.loads(PATH.read_text())
CASES = VECTORS["cases"]


def _b(text: str | None) -> bytes | None:
    return None if text is None else bytes.fromhex(text)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_code_reproduces_the_committed_bytes(case: dict[str, Any]) -> None:
    assert compute(case) == case["expected"]


# -- an independent reader, from the specification ------------------------------------------


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def zigzag(n: int) -> bytes:
    return uvarint((n << 1) ^ (n >> 63))


def compact_nullable(data: bytes | None) -> bytes:
    return b"\x00" if data is None else uvarint(len(data) + 1) + data


def section(pairs: list[tuple[str, bytes | None]]) -> bytes:
    out = zigzag(len(pairs))
    for k, v in pairs:
        kb = k.encode()
        out += zigzag(len(kb)) + kb + (zigzag(-1) if v is None else zigzag(len(v)) + v)
    return out


def read_string(data: bytes, pos: int) -> tuple[str, int]:
    n = data[pos] - 1  # every length here is below 127: one byte
    return data[pos + 1 : pos + 1 + n].decode(), pos + 1 + n


def read_header(data: bytes) -> dict[str, Any]:
    """version, alg, kid, context, bound (array of strings), nonce, tagged fields (none)."""
    assert data[0] == 0
    alg, pos = read_string(data, 1)
    kid, pos = read_string(data, pos)
    context, pos = read_string(data, pos)
    count, pos = data[pos] - 1, pos + 1
    bound = []
    for _ in range(count):
        name, pos = read_string(data, pos)
        bound.append(name)
    fields: dict[str, Any] = {"alg": alg, "kid": kid, "context": context, "bound": bound}
    if pos < len(data) - 1:
        n = data[pos] - 1
        fields["nonce"], pos = data[pos + 1 : pos + 1 + n], pos + 1 + n
    assert data[pos:] == b"\x00"  # no tagged fields
    return fields


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_a_reader_built_from_the_specification_opens_the_vectors(case: dict[str, Any]) -> None:
    expected = case["expected"]
    pairs = [(k, _b(v)) for k, v in expected["wire_headers"]]
    key, value = _b(case["key"]), _b(expected["wire_value"])
    found = dict(pairs)
    if "kheaders.sign" in found:
        params_raw = found["kheaders.sign"] or b""
        params = read_header(params_raw)
        assert (params["alg"], params["kid"]) == ("Ed25519", "s1")
        names = {*params["bound"], "kheaders.protect"}
        signed = (
            b"kheaders.sign/0\n"
            + compact_nullable(params_raw)
            + compact_nullable(key)
            + compact_nullable(value)
            + section([(k, v) for k, v in pairs if k in names])
        )
        assert signed.hex() == expected["signed_bytes"]
        public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(VECTORS["signing_key"]["public"]))
        public.verify(found["kheaders.signature"] or b"", signed)
    plain = value
    if "kheaders.protect" in found:
        raw = found["kheaders.protect"] or b""
        header = read_header(raw)
        assert (header["alg"], header["kid"]) == ("A256GCM", "k1")
        assert header["context"] == (case["context"] or case["topic"])
        bound = set(header["bound"])
        aad = (
            b"kheaders.protect/0\n"
            + compact_nullable(raw)
            + compact_nullable(key)
            + section([(k, v) for k, v in pairs if k in bound])
        )
        assert aad.hex() == expected["aad"]
        plain = AESGCM(bytes.fromhex(VECTORS["aes_key"]["key"])).decrypt(
            header["nonce"], value or b"", aad
        )
    assert plain == _b(case["value"])
    reader = ProtectedDeserializer(
        keyring=StaticKeyring({"k1": bytes.fromhex(VECTORS["aes_key"]["key"])}),
        verify_keyring=StaticKeyring({"s1": bytes.fromhex(VECTORS["signing_key"]["public"])}),
        contexts={case["context"] or case["topic"]},
        require_signature=case["sign"],
    )
    assert unprotect(reader, case["topic"], key, value, pairs) == _b(case["value"])


def test_the_specification_quotes_the_first_vector_exactly() -> None:
    doc = (PATH.parents[2] / "docs" / "protect.md").read_text()
    quoted = re.search(r"kheaders\.protect = (.*?)\nvalue\s+= (\w+)", doc, re.S)
    assert quoted is not None
    header = "".join(quoted.group(1).split())
    expected = dict(CASES[0]["expected"]["wire_headers"])
    assert header == expected["kheaders.protect"]
    assert quoted.group(2) == CASES[0]["expected"]["wire_value"]
