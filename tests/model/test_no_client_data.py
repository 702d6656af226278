"""The header model carries no client data: a received record's Headers are the model's
Headers and nothing more (the consumed bytes of a deserialized record live in the client
layer, kheaders._client.consumed)."""

from __future__ import annotations

import kheaders._model.headers as pure_headers
from tests.support.cores import Core


def test_headers_hold_their_pairs_and_read_only_flag_only(core: Core) -> None:
    headers = core.module("kheaders._model.headers")
    assert set(headers.Headers.__slots__) == {"__weakref__", "_read_only"}
    h = headers.received([("a", b"1")])
    assert not hasattr(h, "_consumed")
    assert not hasattr(h, "__dict__")


def test_the_model_has_no_consumer_api() -> None:
    names = [n for n in dir(pure_headers) if "consumed" in n.lower()]
    assert names == []
