"""ClientIdInterceptor: client id and app name headers, replaced never duplicated."""

from __future__ import annotations

import pytest

from kheaders import ConfigurationError, Headers, ProducerRecord
from kheaders.interceptors.client_id import ClientIdInterceptor


def test_client_id_comes_from_the_producer_config() -> None:
    icpt = ClientIdInterceptor()
    icpt.configure({"client.id": "orders-svc-1", "bootstrap.servers": "x:1"})
    out = icpt.on_send(ProducerRecord("t", b"v", headers=[("a", b"1")]))
    assert out.headers.to_list() == [("a", b"1"), ("client.id", b"orders-svc-1")]


def test_explicit_values_win_over_config() -> None:
    icpt = ClientIdInterceptor("explicit", app_name="billing")
    icpt.configure({"client.id": "from-config", "kheaders.app.name": "other"})
    assert icpt.headers == (("client.id", b"explicit"), ("app.name", b"billing"))


def test_config_keys_set_values_and_header_names() -> None:
    icpt = ClientIdInterceptor()
    icpt.configure(
        {
            "client.id": "rdkafka",
            "kheaders.client.id": "svc",
            "kheaders.app.name": "shop",
            "kheaders.client.id.header": "x-client",
            "kheaders.app.name.header": "x-app",
        }
    )
    assert icpt.headers == (("x-client", b"svc"), ("x-app", b"shop"))


def test_existing_headers_are_replaced_not_duplicated() -> None:
    icpt = ClientIdInterceptor("me", app_name="app")
    rec = ProducerRecord("t", headers=[("client.id", b"old"), ("x", b"1"), ("client.id", b"o2")])
    for _ in range(3):
        rec = icpt.on_send(rec)
    assert rec.headers.values("client.id") == [b"me"]
    assert rec.headers.values("app.name") == [b"app"]
    assert rec.headers.values("x") == [b"1"]


def test_nothing_is_written_without_a_known_client_id() -> None:
    icpt = ClientIdInterceptor()
    icpt.configure({"bootstrap.servers": "x:1"})
    assert list(icpt.on_send(ProducerRecord("t")).headers) == []


def test_read_only_headers_are_copied() -> None:
    closed = Headers([("a", b"1")]).close()
    out = ClientIdInterceptor("me").on_send(ProducerRecord("t", headers=closed))
    assert out.headers.values("client.id") == [b"me"]
    assert "client.id" not in closed


def test_empty_header_key_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="header"):
        ClientIdInterceptor("me", header="")
