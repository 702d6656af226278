"""Every file and every Python name the documents point at exists: a page that names a
module that was renamed or removed (``_client/lean.py``) sends a reader nowhere."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    ["README.md", "bench/README.md", *(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
)
TOP = ("kheaders", "interceptors", "tests", "bench", "examples", "docs", "scripts")
PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:py|md|yml|yaml|toml|json))\b")
WRITTEN = ("bench/results/",)
"""Where the benchmarks write their results (git-ignored): named as outputs, not sources."""
NAME = re.compile(r"\b((?:kheaders|interceptors)(?:\.[A-Za-z_]\w*)+)(\(?)")
"""A dotted name is checked where it is a call or ends in a class name: ``kheaders.x.y``
alone is often a setting (``kheaders.tracing.mode``), not a Python name."""


def _paths(text: str) -> set[str]:
    return {m.group(1) for m in PATH.finditer(text)}


def _exists(path: str, page: str) -> bool:
    """A path as written from the repository root, a page's folder or the package
    (``_client/producer.py``), or a file name under a folder the text names first."""
    if "/" not in path:
        return True  # a bare file name (``conftest.py``, ``results.md``): named by context
    bases = [ROOT, (ROOT / page).parent, ROOT / "kheaders", ROOT / "tests"]
    return any((base / path).exists() for base in bases)


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@pytest.mark.parametrize("page", PAGES)
def test_every_repository_path_a_page_names_exists(page: str) -> None:
    text = (ROOT / page).read_text()
    missing = sorted(
        p
        for p in _paths(text)
        if (p.split("/")[0] in TOP or p.startswith("_"))
        and not p.startswith(WRITTEN)
        and "site-packages" not in p  # an installed layout, in a command line
        and not _exists(p, page)
    )
    assert not missing, f"{page} names files that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES)
def test_every_python_name_a_page_calls_or_names_as_a_class_exists(page: str) -> None:
    text = (ROOT / page).read_text()
    names = {
        m.group(1)
        for m in NAME.finditer(text)
        if m.group(2) or m.group(1).rsplit(".", 1)[1][:1].isupper()
    }
    missing = sorted(n for n in names if not _resolves(n))
    assert not missing, f"{page} names what kheaders does not have: {missing}"


def test_the_check_finds_a_missing_module() -> None:
    assert _paths("a closure (`kheaders/_client/lean.py`); see `_client/gone.py`") == {
        "kheaders/_client/lean.py",
        "_client/gone.py",
    }
    assert not _exists("kheaders/_client/lean.py", "docs/clients.md")
    assert not _exists("_client/gone.py", "docs/clients.md")
    assert _exists("_client/producer.py", "docs/clients.md")
    assert not _resolves("kheaders.broker.slow_consumer_config")
    assert _resolves("kheaders.broker.fast_consumer_config")
