"""Every docstring example in the kheaders package runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import kheaders

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


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_user_docs_examples_hold() -> None:
    path = Path(__file__).resolve().parents[2] / "docs" / "headers.md"
    result = doctest.testfile(str(path), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 20
    assert result.failed == 0, f"{result.failed} examples in docs/headers.md failed"
