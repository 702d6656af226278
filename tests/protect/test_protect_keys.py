"""Keyrings: from text, config, the environment and files; rotation by key id; a KMS hook."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from kheaders._errors import ConfigurationError
from kheaders.protect import (
    CachingKeyring,
    Keyring,
    ProtectedDeserializer,
    ProtectedSerializer,
    ProtectionHeader,
    StaticKeyring,
)
from tests.protect.helpers import AES_KEY, AES_KEY_2, assert_no_secret, protect, unprotect

B1 = base64.b64encode(AES_KEY).decode()
B2 = base64.urlsafe_b64encode(AES_KEY_2).decode().rstrip("=")


def kid_of(headers: list[tuple[str, bytes | None]]) -> str:
    return ProtectionHeader.from_bytes(dict(headers)["kheaders.protect"] or b"").kid


def test_text_env_config_and_files_give_the_same_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = StaticKeyring.from_text(f" k1:{B1} , k2:{B2} ")
    monkeypatch.setenv("KHEADERS_PROTECT_KEYS", f"k1:{B1},k2:{B2}")
    monkeypatch.setenv("KHEADERS_PROTECT_KEYS_CURRENT", "k1")
    env = StaticKeyring.from_env()
    config = StaticKeyring.from_config(
        {"protect.keys.k1": B1, "protect.keys.k2": B2, "protect.keys.current": "k2", "other": 1}
    )
    (tmp_path / "k1.key").write_text(B1 + "\n")
    (tmp_path / "k2.key").write_text(B2)
    (tmp_path / "current").write_text("k2\n")
    files = StaticKeyring.from_directory(tmp_path)
    for ring in (text, env, config, files):
        assert isinstance(ring, Keyring)
        assert (ring.key("k1"), ring.key("k2"), ring.key("k3")) == (AES_KEY, AES_KEY_2, None)
    assert [r.current_id() for r in (text, env, config, files)] == ["k2", "k1", "k2", "k2"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "at least one key"),
        ("k1", "not 'kid:base64'"),
        (f":{B1}", "not 'kid:base64'"),
        (f"k1:{B1[:-4]}!!!!", "not valid base64"),
        ("k1:", "empty"),
    ],
)
def test_malformed_key_text_is_a_clear_error_without_the_text(text: str, words: str) -> None:
    with pytest.raises(ConfigurationError, match=words) as info:
        StaticKeyring.from_text(text)
    assert_no_secret(str(info.value))
    if len(text) > 4:
        assert text.split(":", 1)[-1] not in str(info.value)


def test_missing_sources_name_themselves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KHEADERS_PROTECT_KEYS", raising=False)
    with pytest.raises(ConfigurationError, match="KHEADERS_PROTECT_KEYS"):
        StaticKeyring.from_env()
    with pytest.raises(ConfigurationError, match="holds no"):
        StaticKeyring.from_directory(tmp_path)
    with pytest.raises(ConfigurationError, match="does not exist"):
        StaticKeyring.from_directory(tmp_path / "none")
    with pytest.raises(ConfigurationError, match="'k3' is not in the keyring"):
        StaticKeyring({"k1": AES_KEY}, current="k3")
    monkeypatch.delenv("KHEADERS_PROTECT_SIGNING_KEYS", raising=False)
    with pytest.raises(ConfigurationError, match="no keys"):
        ProtectedSerializer()


def test_rotation_new_key_writes_old_keys_still_read() -> None:
    ring = StaticKeyring({"k1": AES_KEY})
    ser = ProtectedSerializer(keyring=ring)
    old = protect(ser, "t", b"k", b"before", [])
    ring.add("k2", AES_KEY_2)
    new = protect(ser, "t", b"k", b"after", [])
    assert (kid_of(old[2]), kid_of(new[2])) == ("k1", "k2")
    reader = ProtectedDeserializer(keyring=ring)
    assert unprotect(reader, "t", *old) == b"before"
    assert unprotect(reader, "t", *new) == b"after"
    with pytest.raises(ConfigurationError, match="already names another key"):
        ring.add("k1", AES_KEY_2)


def test_kms_hook_is_asked_once_per_key_id() -> None:
    asked: list[str] = []
    wrapped = {"k1": bytes(b ^ 0x5A for b in AES_KEY)}  # what a KMS would unwrap

    def unwrap(kid: str) -> bytes | None:
        asked.append(kid)
        data = wrapped.get(kid)
        return None if data is None else bytes(b ^ 0x5A for b in data)

    ring = CachingKeyring(unwrap, lambda: "k1")
    ser = ProtectedSerializer(keyring=ring)
    records = [protect(ser, "t", b"k", b"v%d" % i, []) for i in range(5)]
    assert [unprotect(ProtectedDeserializer(keyring=ring), "t", *r) for r in records] == [
        b"v%d" % i for i in range(5)
    ]
    assert asked == ["k1"]
    assert_no_secret(repr(ring))


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"bound_headers": "tenant"}, "not one str"),
        ({"bound_headers": ["kheaders.protect"]}, "cannot be a bound header"),
        ({"bound_headers": [""]}, "cannot be a bound header"),
        ({"context": ""}, "must not be empty"),
    ],
)
def test_bad_protection_settings_are_configuration_errors(
    kwargs: dict[str, object], words: str
) -> None:
    with pytest.raises(ConfigurationError, match=words):
        ProtectedSerializer(keyring=StaticKeyring({"k1": AES_KEY}), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="non-empty collection"):
        ProtectedDeserializer(keyring=StaticKeyring({"k1": AES_KEY}), contexts=set())
