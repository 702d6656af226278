"""Header rendering for humans: sensitive keys redacted, text or hex values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import Headers
from kheaders._model.redact import printable, render_value
from kheaders.redaction import Redactor, is_sensitive, render_headers


@pytest.mark.parametrize(
    "key",
    [
        "authorization",
        "Authorization",
        "COOKIE",
        "x-auth-token",
        "client_secret",
        "db.Password",
        "api-key",
        "x-api-KEY",
        "Proxy-Authorization",
        "Ocp-Apim-Subscription-Key",
        "x-license-keys",
        "AWS_SECRET_ACCESS_KEY",
        "private.key",
    ],
)
def test_default_rule_redacts_sensitive_keys(key: str) -> None:
    assert is_sensitive(key)


@pytest.mark.parametrize(
    "key",
    [
        "traceparent",
        "correlation.id",
        "client.id",
        "content-type",
        "__key_schema_id",  # Schema Registry's header: the record key's schema, not a secret
        "__value_schema_id",
        "key.format",
    ],
)
def test_default_rule_keeps_ordinary_keys(key: str) -> None:
    assert not is_sensitive(key)


def test_render_headers_redacts_and_keeps_order_and_duplicates() -> None:
    headers = Headers([("a", b"1"), ("Authorization", b"Bearer abc"), ("a", b"2")])
    assert render_headers(headers) == [("a", "1"), ("Authorization", "<redacted>"), ("a", "2")]


def test_render_headers_without_redaction_shows_everything() -> None:
    assert render_headers([("token", b"t")], redact=False) == [("token", "t")]


def test_extra_keys_and_allowlist() -> None:
    rule = Redactor(extra=["X-User"], allow=["message.key"])
    out = render_headers([("x-user", b"bob"), ("message.key", b"k1"), ("token", b"t")], rule)
    assert out == [("x-user", "<redacted>"), ("message.key", "k1"), ("token", "<redacted>")]


def test_disabled_redactor_redacts_nothing() -> None:
    assert render_headers([("password", b"p")], Redactor(enabled=False)) == [("password", "p")]


def test_values_are_text_hex_or_null() -> None:
    out = render_headers(
        [("t", "héllo".encode()), ("b", b"\x00\x01"), ("bad", b"\xff"), ("n", None), ("e", b"")]
    )
    assert out == [("t", "héllo"), ("b", "0x0001"), ("bad", "0xff"), ("n", "<null>"), ("e", "")]


def test_value_limit_truncates() -> None:
    assert render_value(b"abcdef", limit=3) == "abc…"


@given(st.lists(st.tuples(st.text(min_size=1), st.one_of(st.none(), st.binary()))))
def test_render_headers_never_raises_and_is_printable(
    pairs: list[tuple[str, bytes | None]],
) -> None:
    out = render_headers(pairs)
    assert [k for k, _ in out] == [printable(k) for k, _ in pairs]
    assert all(k.isprintable() and v.isprintable() for k, v in out)
