"""Every docstring example in the kheaders package runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import kheaders
from tests.support.doctests import DefiningModuleFinder, run_doctests

# Modules whose import needs optional extras; their own test suites cover them.
_OPTIONAL_PREFIXES = ("kheaders.spark",)

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(kheaders.__path__, "kheaders.")
    if not info.name.startswith(_OPTIONAL_PREFIXES) and not info.name.endswith(".__main__")
)


def test_the_core_modules_are_collected() -> None:
    core = (
        "kheaders._model.headers",
        "kheaders.wire",
        "kheaders._codec.values",
        "kheaders._codec.struct",
    )
    for name in core:
        assert name in MODULES


def test_examples_of_a_class_a_public_module_claims_are_still_found() -> None:
    from kheaders import Headers
    from kheaders._model import headers

    assert Headers.__module__ == "kheaders"
    found = {t.name for t in DefiningModuleFinder().find(headers) if t.examples}
    assert any(n.startswith("kheaders._model.headers.Headers.") for n in found), found
    assert not any("Headers" in t.name for t in DefiningModuleFinder().find(kheaders) if t.examples)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = run_doctests(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_user_docs_examples_hold() -> None:
    path = Path(__file__).resolve().parents[2] / "docs" / "headers.md"
    result = doctest.testfile(str(path), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 20
    assert result.failed == 0, f"{result.failed} examples in docs/headers.md failed"
