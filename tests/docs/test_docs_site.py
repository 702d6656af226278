"""The docs site (mkdocs.yml) holds every guide and a reference page for every public module,
and no page sends a reader to a private module (the strict build itself is a stage of
.ci/run: ``mkdocs build --strict``, where a broken link or cross-reference fails)."""

from __future__ import annotations

import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

import kheaders

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
APPLICATIONS = ("kheaders.cli", "kheaders.demo")
"""Public packages that are programs (the ``kheaders`` command, the demo), not an API."""
CONTRIBUTORS = ("architecture.md",)
"""Pages for people changing kheaders, which must say where private code lives."""
PRIVATE = re.compile(r"\bkheaders(?:\.\w+)*\._(?!_)\w*|\bkheaders/(?:\w+/)*_(?!_)\w+")
"""A private module by dotted name (``kheaders._model.x``, ``kheaders.compaction._rules``)
or by path (``kheaders/_client/producer.py``); dunders (``kheaders.__file__``) are not."""


def _nav_pages(nav: list[Any]) -> list[str]:
    out: list[str] = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        out.extend(_nav_pages(value) if isinstance(value, list) else [value])
    return out


def _site() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())  # type: ignore[no-any-return]


def test_the_private_name_pattern_finds_both_forms() -> None:
    found = PRIVATE.findall(
        "`kheaders._model.traceparent.f`, kheaders.compaction._rules, kheaders/_client/x.py,"
        " kheaders.tracecontext.f, kheaders.__file__, kheaders/interceptors/tracing.py"
    )
    assert found == ["kheaders._model", "kheaders.compaction._rules", "kheaders/_client"]


@pytest.mark.parametrize("page", [p for p in PAGES if p not in CONTRIBUTORS])
def test_no_docs_page_names_a_private_module(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    named = sorted(set(PRIVATE.findall(text)))
    assert not named, f"docs/{page} names private modules {named}: name the public API"


def test_every_page_is_in_the_site_and_every_entry_is_a_page() -> None:
    site = _site()
    assert site["docs_dir"] == "docs"
    assert site["strict"] is True
    assert sorted(_nav_pages(site["nav"])) == PAGES


DEPRECATED_MODULES = {"kheaders.processing.spring_headers"}  # kheaders.deadletter.spring's old path


def test_every_public_module_has_a_reference_page() -> None:
    public = {
        info.name
        for info in pkgutil.walk_packages(kheaders.__path__, "kheaders.")
        if not any(part.startswith("_") for part in info.name.split("."))
        and not info.name.startswith(APPLICATIONS)
        and info.name not in DEPRECATED_MODULES
    } | {"kheaders"}
    documented = {
        match.group(1)
        for page in (DOCS / "reference").glob("*.md")
        for match in re.finditer(r"^::: ([\w.]+)$", page.read_text(), re.M)
    }
    assert documented == public
