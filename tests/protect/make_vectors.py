"""Writes tests/data/protect_vectors.json: fixed keys, nonces and records → the exact bytes.

Run ``python -m tests.protect.make_vectors`` only when the format changes on purpose (a new
version); test_protect_vectors.py checks the code still produces these bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kheaders import Headers
from kheaders.protect import StaticKeyring
from kheaders.protect._crypto import aead_keys, public_key_of, signing_keys
from kheaders.protect._format import PROTECT_HEADER, SIGN_HEADER, aad, bound_section, signed_bytes
from kheaders.protect._seal import Sealer

PATH = Path(__file__).parent.parent / "data" / "protect_vectors.json"
AES_KEY = bytes.fromhex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
SEED = bytes.fromhex(
    "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
)  # RFC 8032 test 1
CASES: list[dict[str, Any]] = [
    {
        "name": "encrypted and signed, one bound header",
        "topic": "orders", "context": None, "bound": ["tenant"], "encrypt": True, "sign": True,
        "key": "6f726465722d3137", "value": "7b22616d6f756e74223a2031327d",
        "headers": [["traceparent", "30302d61"], ["tenant", "61636d65"]],
        "nonce": "cafebabefacedbaddecaf888",
    },
    {
        "name": "encrypted only, null key, no bound header, named context",
        "topic": "orders.retry", "context": "orders", "bound": [], "encrypt": True, "sign": False,
        "key": None, "value": "68656c6c6f", "headers": [], "nonce": "000000000000000000000001",
    },
    {
        "name": "empty value encrypted, null header bound",
        "topic": "t", "context": None, "bound": ["h"], "encrypt": True, "sign": False,
        "key": "", "value": "", "headers": [["h", None]], "nonce": "ffffffffffffffffffffffff",
    },
    {
        "name": "tombstone signed",
        "topic": "orders", "context": None, "bound": [], "encrypt": True, "sign": True,
        "key": "6f726465722d3137", "value": None, "headers": [], "nonce": None,
    },
]  # fmt: skip


def _hex(data: bytes | None) -> str | None:
    return None if data is None else data.hex()


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else bytes.fromhex(text)


def compute(case: dict[str, Any]) -> dict[str, Any]:
    """The wire form of ``case`` (key, value, headers) and the intermediate bytes."""
    sealer = Sealer(
        aead_keys(StaticKeyring({"k1": AES_KEY})) if case["encrypt"] else None,
        signing_keys(StaticKeyring({"s1": SEED})) if case["sign"] else None,
        case["bound"],
        case["context"],
    )
    headers = Headers([(k, _bytes(v)) for k, v in case["headers"]])
    key = _bytes(case["key"])
    value = sealer.seal(case["topic"], headers, key, _bytes(case["value"]), _bytes(case["nonce"]))
    pairs = headers.to_list()
    out: dict[str, Any] = {
        "wire_value": _hex(value),
        "wire_headers": [[k, _hex(v)] for k, v in pairs],
    }
    found = dict(pairs)
    if PROTECT_HEADER in found:
        out["aad"] = _hex(
            aad(found[PROTECT_HEADER] or b"", key, bound_section(pairs, frozenset(case["bound"])))
        )
    if SIGN_HEADER in found:
        names = frozenset(case["bound"]) | {PROTECT_HEADER}
        out["signed_bytes"] = _hex(
            signed_bytes(found[SIGN_HEADER] or b"", key, value, bound_section(pairs, names))
        )
    return out


def build() -> dict[str, Any]:
    return {
        "about": "kheaders.protect format v0 test vectors: see docs/protect.md",
        "aes_key": {"kid": "k1", "key": AES_KEY.hex()},
        "signing_key": {"kid": "s1", "seed": SEED.hex(), "public": public_key_of(SEED).hex()},
        "cases": [{**case, "expected": compute(case)} for case in CASES],
    }


if __name__ == "__main__":
    PATH.write_text(json.dumps(build(), indent=2) + "\n")
    print(f"wrote {PATH}")
