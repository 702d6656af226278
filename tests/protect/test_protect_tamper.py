"""Every alteration of what a protected record binds is refused, with a clear error that never
shows key material or plaintext."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import IntegrityError
from kheaders._errors import ConfigurationError
from kheaders.protect import PROTECT_HEADER, SIGN_HEADER, SIGNATURE_HEADER, StaticKeyring
from kheaders.protect._crypto import aead_keys
from tests.protect.helpers import (
    AES_KEY,
    SIGNING_SEED,
    aes_keyring,
    assert_no_secret,
    protect,
    reader,
    signing_keyring,
    unprotect,
    verify_keyring,
    writer,
)

PLAIN = b"salary=123456;iban=DE89370400440532013000"
BOUND = ("tenant", "region")
HEADERS = [("tenant", b"acme"), ("traceparent", b"00-1-2-01"), ("region", b"eu")]
Pairs = list[tuple[str, bytes | None]]


def _record(sign: bool = True) -> tuple[bytes | None, bytes | None, Pairs]:
    return protect(writer(sign=sign, bound=BOUND), "orders", b"customer-42", PLAIN, list(HEADERS))


SIGNED = _record()
ENCRYPTED = _record(sign=False)


def _flip(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def _with(headers: Pairs, name: str, value: bytes | None) -> Pairs:
    return [(k, value if k == name else v) for k, v in headers]


READERS = {True: reader(verify=True), False: reader(verify=False)}
"""Readers that opened the genuine records (each keeps what it decoded of their headers):
the altered records must be refused all the same."""
assert unprotect(READERS[True], "orders", *SIGNED) == PLAIN
assert unprotect(READERS[False], "orders", *ENCRYPTED) == PLAIN


def _assert_refused(key: bytes | None, value: bytes | None, headers: Pairs, *, verify: bool) -> str:
    with pytest.raises(IntegrityError) as info:
        unprotect(READERS[verify], "orders", key, value, headers)
    text = str(info.value)
    assert text.startswith("protected record refused: ")
    assert_no_secret(text, PLAIN)
    return text


@pytest.mark.parametrize("verify", [True, False], ids=["signed", "encrypted-only"])
def test_every_bit_flip_in_value_key_bound_headers_and_protection_is_refused(verify: bool) -> None:
    key, value, headers = SIGNED if verify else ENCRYPTED
    assert key is not None
    assert value is not None
    assert unprotect(READERS[verify], "orders", key, value, headers) == PLAIN
    targets = ["tenant", "region", PROTECT_HEADER] + (
        [SIGN_HEADER, SIGNATURE_HEADER] if verify else []
    )
    for bit in range(len(value) * 8):
        _assert_refused(key, _flip(value, bit), headers, verify=verify)
    for bit in range(len(key) * 8):
        _assert_refused(_flip(key, bit), value, headers, verify=verify)
    for name in targets:
        raw = dict(headers)[name] or b""
        for bit in range(len(raw) * 8):
            _assert_refused(key, value, _with(headers, name, _flip(raw, bit)), verify=verify)


def test_errors_name_the_key_id() -> None:
    key, value, headers = ENCRYPTED
    assert value is not None
    text = _assert_refused(key, _flip(value, 3), headers, verify=False)
    assert "kid='k1'" in text
    assert "alg=A256GCM" in text
    key, value, headers = SIGNED
    text = _assert_refused(key, value, _with(headers, "tenant", b"evil"), verify=True)
    assert "bad signature (kid='s1')" in text


MUTATIONS = st.sampled_from(
    [
        "flip",
        "truncate",
        "extend",
        "replace",
        "drop",
        "duplicate",
        "add-bound",
        "swap-bound",
        "topic",
    ]
)
PARTS = st.sampled_from(
    ["key", "value", "tenant", "region", PROTECT_HEADER, SIGN_HEADER, SIGNATURE_HEADER]
)


@given(
    mutation=MUTATIONS,
    part=PARTS,
    where=st.integers(min_value=0),
    noise=st.binary(min_size=1, max_size=8),
)
def test_any_mutation_of_a_protected_record_is_refused(
    mutation: str, part: str, where: int, noise: bytes
) -> None:
    key, value, headers = SIGNED
    assert key is not None
    assert value is not None
    if mutation == "topic":
        with pytest.raises(IntegrityError):
            unprotect(reader(), "orders-copy", key, value, headers)
        return
    if mutation == "swap-bound":
        headers = [
            ("region", b"eu"),
            ("traceparent", b"00-1-2-01"),
            ("tenant", b"acme"),
            *headers[3:],
        ]
    elif mutation == "add-bound":
        headers = [*headers, (part if part in BOUND else "tenant", noise)]
    elif part in ("key", "value"):
        data = key if part == "key" else value
        changed = _mutated(data, mutation, where, noise)
        if changed is None and mutation == "drop":
            changed = None
        key, value = (changed, value) if part == "key" else (key, changed)
    elif mutation == "drop":
        headers = [(k, v) for k, v in headers if k != part]
    elif mutation == "duplicate":
        headers = [*headers, (part, dict(headers)[part])]
    else:
        headers = _with(headers, part, _mutated(dict(headers)[part] or b"", mutation, where, noise))
    _assert_refused(key, value, headers, verify=True)


def _mutated(data: bytes, mutation: str, where: int, noise: bytes) -> bytes | None:
    if mutation == "flip":
        return _flip(data, where % (len(data) * 8)) if data else b"\x00"
    if mutation == "truncate":
        return data[: where % len(data)] if data else None
    if mutation in ("extend", "add-bound", "duplicate"):
        return data + noise
    if mutation == "replace":
        return noise if noise != data else noise + b"\x00"
    return None  # drop: a null key or value


def test_reprs_and_errors_never_show_key_material() -> None:
    shown = [
        repr(aes_keyring("k1", "k2")),
        repr(signing_keyring()),
        repr(verify_keyring()),
        repr(writer()),
        repr(reader()),
        repr(aead_keys(aes_keyring())),
    ]
    for text in shown:
        assert_no_secret(text)
        assert "k1" in text or "s1" in text  # key ids are shown
    bad = base64.b64encode(AES_KEY).decode()[:-3] + "!!"
    with pytest.raises(ConfigurationError) as info:
        StaticKeyring.from_text(f"k1:{bad}")
    assert bad not in str(info.value)
    assert "k1" in str(info.value)
    assert_no_secret(str(info.value))
    short = StaticKeyring({"k9": SIGNING_SEED[:16]})
    with pytest.raises(ValueError, match="'k9' has 16 bytes") as err:
        aead_keys(short).get("k9")
    assert_no_secret(str(err.value))
    key, value, headers = ENCRYPTED
    with pytest.raises(IntegrityError) as refusal:
        unprotect(
            reader(verify=False, keyring=short),
            "orders",
            key,
            value,
            _with(
                headers,
                PROTECT_HEADER,
                (dict(headers)[PROTECT_HEADER] or b"").replace(b"k1", b"k9"),
            ),
        )
    assert "not usable" in str(refusal.value)
    assert_no_secret(str(refusal.value), PLAIN)


@given(
    protect_raw=st.binary(max_size=80),
    sign_raw=st.binary(max_size=80),
    signature=st.binary(max_size=80),
    value=st.one_of(st.none(), st.binary(max_size=64)),
    which=st.sets(st.sampled_from([PROTECT_HEADER, SIGN_HEADER, SIGNATURE_HEADER]), min_size=1),
)
def test_arbitrary_protection_headers_are_refused_never_crash(
    protect_raw: bytes, sign_raw: bytes, signature: bytes, value: bytes | None, which: set[str]
) -> None:
    given_headers = {
        PROTECT_HEADER: protect_raw,
        SIGN_HEADER: sign_raw,
        SIGNATURE_HEADER: signature,
    }
    headers: Pairs = [
        ("tenant", b"acme"),
        *((k, v) for k, v in given_headers.items() if k in which),
    ]
    with pytest.raises(IntegrityError):
        unprotect(READERS[True], "orders", b"k", value, headers)
    if PROTECT_HEADER in which or value is not None:  # else: a tombstone, signature unchecked
        with pytest.raises(IntegrityError):
            unprotect(READERS[False], "orders", b"k", value, headers)
