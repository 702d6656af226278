"""Protected records in memory: round trips, what is bound, and every refusal (no broker)."""

from __future__ import annotations

import pytest

from kheaders import DeserializationError, Headers, IntegrityError
from kheaders.protect import (
    PROTECT_HEADER,
    SIGN_HEADER,
    SIGNATURE_HEADER,
    ProtectedDeserializer,
    ProtectedSerializer,
    ProtectionHeader,
    SignatureParams,
    describe,
)
from kheaders.protect._format import TAG_SIZE
from tests.protect.helpers import (
    aes_keyring,
    assert_no_secret,
    protect,
    reader,
    unprotect,
    writer,
)

PLAIN = b"card 4111-1111-1111-1111 expires 12/29"
HEADERS = [("traceparent", b"00-" + b"a" * 32 + b"-" + b"b" * 16 + b"-01"), ("tenant", b"acme")]


def sealed(**kw: object) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]:
    return protect(writer(**kw), "orders", b"order-17", PLAIN, list(HEADERS))  # type: ignore[arg-type]


def refused(
    de: ProtectedDeserializer,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]],
    topic: str = "orders",
) -> IntegrityError:
    with pytest.raises(IntegrityError) as info:
        unprotect(de, topic, key, value, headers)
    assert_no_secret(str(info.value), PLAIN)
    return info.value


def test_round_trip_encrypts_signs_and_keeps_other_headers_readable() -> None:
    key, value, headers = sealed()
    assert value is not None
    assert PLAIN not in value
    assert len(value) == len(PLAIN) + TAG_SIZE
    assert headers[:2] == HEADERS  # metadata untouched, in order
    assert [k for k, _ in headers[2:]] == [PROTECT_HEADER, SIGN_HEADER, SIGNATURE_HEADER]
    header = ProtectionHeader.from_bytes(headers[2][1] or b"")
    assert (header.alg, header.kid, header.context, header.bound) == (
        "A256GCM",
        "k1",
        "orders",
        ["tenant"],
    )
    assert len(header.nonce) == 12
    assert unprotect(reader(), "orders", key, value, headers) == PLAIN
    assert describe(headers) == "<encrypted kid=k1 alg=A256GCM>"


def test_each_record_gets_a_fresh_nonce() -> None:
    nonces = {ProtectionHeader.from_bytes(sealed()[2][2][1] or b"").nonce for _ in range(50)}
    assert len(nonces) == 50


def test_tombstone_stays_null_and_is_still_signed() -> None:
    key, value, headers = protect(writer(), "orders", b"order-17", None, [])
    assert value is None
    assert [k for k, _ in headers] == [SIGN_HEADER, SIGNATURE_HEADER]
    assert unprotect(reader(), "orders", key, None, headers) is None
    refused(reader(), b"order-18", None, headers)  # the signature binds the key


def test_empty_value_is_encrypted() -> None:
    key, value, headers = protect(writer(), "orders", None, b"", [])
    assert value is not None
    assert len(value) == TAG_SIZE
    assert unprotect(reader(), "orders", key, value, headers) == b""
    assert "does not decrypt" in str(
        refused(reader(verify=False), None, value[:-1] + bytes([value[-1] ^ 1]), headers)
    )


def test_unbound_headers_may_change_bound_ones_may_not() -> None:
    key, value, headers = sealed(sign=False)
    added = [*headers, ("kheaders.dlt.original.topic", b"orders"), ("traceparent", b"other")]
    assert unprotect(reader(verify=False), "orders", key, value, added) == PLAIN
    changed = [("tenant", b"evil") if k == "tenant" else (k, v) for k, v in headers]
    assert "does not decrypt" in str(refused(reader(verify=False), key, value, changed))
    extra = [*headers, ("tenant", b"second")]
    refused(reader(verify=False), key, value, extra)
    removed = [(k, v) for k, v in headers if k != "tenant"]
    refused(reader(verify=False), key, value, removed)


def test_context_defaults_to_the_topic_and_a_reader_accepts_only_its_contexts() -> None:
    key, value, headers = sealed()
    err = refused(reader(), key, value, headers, topic="orders.dlt")
    assert "context 'orders'" in str(err)
    assert "kid='s1'" in str(err)
    err = refused(reader(verify=False), key, value, headers, topic="orders.dlt")
    assert "context 'orders'" in str(err)
    assert "kid='k1'" in str(err)
    assert unprotect(reader(contexts={"orders"}), "orders.dlt", key, value, headers) == PLAIN
    named = protect(writer(context="billing"), "orders", b"k", PLAIN, [])
    assert unprotect(reader(contexts={"billing"}), "anywhere", *named) == PLAIN
    refused(reader(), *named)


def test_key_is_bound_null_and_empty_keys_differ() -> None:
    _, value, headers = protect(writer(sign=False), "orders", None, PLAIN, [])
    assert unprotect(reader(verify=False), "orders", None, value, headers) == PLAIN
    refused(reader(verify=False), b"", value, headers)
    refused(reader(verify=False), b"x", value, headers)


def test_signature_required_missing_bad_or_unknown_key_id_refused() -> None:
    key, value, headers = sealed(sign=False)
    assert "not signed" in str(refused(reader(), key, value, headers))
    key, value, headers = sealed()
    no_sig = [(k, v) for k, v in headers if k != SIGNATURE_HEADER]
    assert "missing" in str(refused(reader(), key, value, no_sig))
    no_params = [(k, v) for k, v in headers if k != SIGN_HEADER]
    assert "missing" in str(refused(reader(), key, value, no_params))
    params = SignatureParams.from_bytes(dict(headers)[SIGN_HEADER] or b"")
    params.kid = "s9"
    other = [(k, params.to_bytes() if k == SIGN_HEADER else v) for k, v in headers]
    assert "unknown verification key id 's9'" in str(refused(reader(), key, value, other))


def test_unknown_encryption_key_id_names_it() -> None:
    key, value, headers = sealed(sign=False, keyring=aes_keyring("k1", "k2"))
    de = reader(verify=False)  # it holds k1 only
    for _ in range(3):  # the same reader, every time (it keeps what it decoded of the header)
        assert "unknown encryption key id 'k2'" in str(refused(de, key, value, headers))


def test_unknown_algorithm_and_version_are_refused() -> None:
    key, value, headers = sealed(sign=False)
    header = ProtectionHeader.from_bytes(dict(headers)[PROTECT_HEADER] or b"")
    header.alg = "A128GCM"
    other = [(k, header.to_bytes() if k == PROTECT_HEADER else v) for k, v in headers]
    assert "unknown algorithm 'A128GCM'" in str(refused(reader(verify=False), key, value, other))
    newer = [(k, b"\x01" + (v or b"")[1:] if k == PROTECT_HEADER else v) for k, v in headers]
    assert "version 1" in str(refused(reader(verify=False), key, value, newer))
    key, value, headers = sealed()
    params = SignatureParams.from_bytes(dict(headers)[SIGN_HEADER] or b"")
    params.alg = "Ed448"
    other = [(k, params.to_bytes() if k == SIGN_HEADER else v) for k, v in headers]
    assert "unknown signature algorithm 'Ed448'" in str(refused(reader(), key, value, other))
    newer = [(k, b"\x01" + (v or b"")[1:] if k == SIGN_HEADER else v) for k, v in headers]
    assert "version 1" in str(refused(reader(), key, value, newer))


def test_truncated_signature_headers_are_refused() -> None:
    key, value, headers = sealed()
    for name in (SIGN_HEADER, SIGNATURE_HEADER):
        raw = dict(headers)[name] or b""
        for n in range(len(raw)):
            cut = [(k, raw[:n] if k == name else v) for k, v in headers]
            refused(reader(), key, value, cut)


def test_truncated_duplicated_null_protection_headers_are_refused() -> None:
    key, value, headers = sealed()
    raw = dict(headers)[PROTECT_HEADER] or b""
    for n in range(len(raw)):
        cut = [(k, raw[:n] if k == PROTECT_HEADER else v) for k, v in headers]
        refused(reader(verify=False), key, value, cut)
    for name in (PROTECT_HEADER, SIGN_HEADER, SIGNATURE_HEADER):
        twice = [*headers, (name, dict(headers)[name])]
        assert "more than once" in str(refused(reader(), key, value, twice))
        null = [(k, None if k == name else v) for k, v in headers]
        assert "is null" in str(refused(reader(), key, value, null))


def test_a_record_is_never_protected_twice() -> None:
    key, value, headers = sealed()
    with pytest.raises(ValueError, match="protected twice"):
        protect(writer(), "orders", key, value, headers)


def test_value_too_short_for_a_tag_or_null_when_encrypted() -> None:
    key, value, headers = sealed(sign=False)
    assert value is not None
    for n in range(TAG_SIZE):
        assert "too short" in str(refused(reader(verify=False), key, value[:n], headers))
    assert "null" in str(refused(reader(verify=False), key, None, headers))


def test_plaintext_refused_where_encryption_is_required_allowed_when_not() -> None:
    assert "not encrypted" in str(refused(reader(verify=False), b"k", b"plain", []))
    lenient = reader(verify=False, require_encryption=False)
    assert unprotect(lenient, "orders", b"k", b"plain", []) == b"plain"


def test_integrity_error_is_a_deserialization_error() -> None:
    assert issubclass(IntegrityError, DeserializationError)
    assert issubclass(IntegrityError, ValueError)


def test_without_the_key_every_record_fails_loudly() -> None:
    """Outside a client (no record context) neither the value serializer nor the value
    deserializer can bind the key: both refuse."""
    h = Headers()
    with pytest.raises(LookupError, match="no record context"):
        writer().serialize("orders", h, PLAIN)
    _key, value, headers = sealed()
    h = Headers(headers).close()
    with pytest.raises(IntegrityError, match="no record context"):
        reader().deserialize("orders", h, value)


def test_inner_serializers_run_on_the_plaintext() -> None:
    from kheaders import JsonDeserializer, JsonSerializer

    ser = ProtectedSerializer(JsonSerializer(), keyring=aes_keyring())
    key, value, headers = protect(ser, "orders", b"k", {"amount": 12}, [])  # type: ignore[arg-type]
    assert [k for k, _ in headers] == ["content-type", PROTECT_HEADER]  # the inner's, then ours
    assert value is not None
    assert len(value) == len(b'{"amount":12}') + TAG_SIZE
    de = ProtectedDeserializer(JsonDeserializer(), keyring=aes_keyring())
    assert unprotect(de, "orders", key, value, headers) == {"amount": 12}
