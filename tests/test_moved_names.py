"""Old import paths keep working for a release, with a DeprecationWarning, and give the same
objects as the new ones: the top-level ``interceptors`` package is now ``kheaders.interceptors``.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import kheaders.interceptors
from kheaders import Producer, ProducerRecord

ROOT = Path(__file__).resolve().parents[1]
MOVED = sorted(
    info.name
    for info in pkgutil.iter_modules(kheaders.interceptors.__path__)
    if not info.name.startswith("_")
)


@pytest.fixture
def fresh() -> Iterator[None]:
    """No ``interceptors`` module imported yet (the warning comes with the first import in a
    process); whatever was imported before is put back afterwards."""
    saved = {n: m for n, m in sys.modules.items() if n.partition(".")[0] == "interceptors"}
    for name in saved:
        del sys.modules[name]
    try:
        yield
    finally:
        for name in [n for n in sys.modules if n.partition(".")[0] == "interceptors"]:
            del sys.modules[name]
        sys.modules.update(saved)


def test_every_public_module_keeps_its_old_name() -> None:
    shims = sorted(p.stem for p in (ROOT / "interceptors").glob("*.py") if p.stem[0] != "_")
    assert "tracing" in MOVED
    assert shims == MOVED


@pytest.mark.usefixtures("fresh")
def test_the_old_import_warns_at_the_importing_line() -> None:
    with pytest.warns(DeprecationWarning, match=r"import 'kheaders\.interceptors'") as caught:
        import interceptors.tracing
    assert [w.filename for w in caught] == [__file__]
    assert interceptors.tracing.TracingProducerInterceptor is (
        kheaders.interceptors.tracing.TracingProducerInterceptor
    )


@pytest.mark.usefixtures("fresh")
@pytest.mark.parametrize("name", MOVED)
def test_the_old_module_gives_the_same_objects(name: str) -> None:
    with pytest.warns(DeprecationWarning, match="top-level .interceptors. package"):
        old = importlib.import_module(f"interceptors.{name}")
    new = importlib.import_module(f"kheaders.interceptors.{name}")
    public = [n for n in vars(new) if not n.startswith("_")]
    assert public
    assert all(getattr(old, n) is getattr(new, n) for n in public)
    helpers = [n for n in vars(new) if n.startswith("_") and not n.startswith("__")]
    assert all(getattr(old, n) is getattr(new, n) for n in helpers)  # as before the move
    with pytest.raises(AttributeError):
        _ = old.no_such_name


@pytest.mark.usefixtures("fresh")
def test_an_old_dotted_name_in_config_resolves_and_warns_at_the_client() -> None:
    config = {
        "bootstrap.servers": "127.0.0.1:9",  # nothing listens: nothing is sent
        "client.id": "svc",
        "interceptor.classes": "interceptors.client_id.ClientIdInterceptor",
    }
    with pytest.warns(DeprecationWarning, match="kheaders.interceptors") as caught:
        producer = Producer(config)
    try:
        assert [w.filename for w in caught] == [__file__]  # the line building the client
        (built,) = producer.interceptors.interceptors
        sent = producer.interceptors.send(ProducerRecord("t", b"v"))
    finally:
        producer.close(timeout=0)
    assert type(built) is kheaders.interceptors.client_id.ClientIdInterceptor
    assert sent.headers.last_value("client.id") == b"svc"


@pytest.mark.usefixtures("fresh")
def test_the_new_names_never_warn() -> None:
    config = {
        "bootstrap.servers": "127.0.0.1:9",
        "interceptor.classes": "kheaders.interceptors.client_id.ClientIdInterceptor",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        importlib.reload(kheaders.interceptors.tracing)
        Producer(config).close(timeout=0)
    assert "interceptors" not in sys.modules
