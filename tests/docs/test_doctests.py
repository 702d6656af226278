"""Every docstring example in the kheaders package runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

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


def _defined_in(cls: type, module: ModuleType) -> bool:
    """Whether ``module`` defines ``cls``: a public class's ``__module__`` names the public
    module that exports it (kheaders._public), so its methods' globals tell where it lives."""
    functions = [getattr(v, "__func__", getattr(v, "fget", v)) for v in vars(cls).values()]
    globals_ = [f.__globals__ for f in functions if inspect.isfunction(f)]
    if globals_:
        return any(g is module.__dict__ for g in globals_)
    source = Path(module.__file__ or "").read_text()  # a class of attributes only
    return re.search(rf"^class {cls.__name__}\b", source, re.M) is not None


class _Finder(doctest.DocTestFinder):
    """doctest's finder, finding a class's examples in the module that defines it."""

    def _from_module(self, module: ModuleType, object: object) -> bool:
        if inspect.isclass(object):
            return _defined_in(object, module)
        return bool(super()._from_module(module, object))  # type: ignore[misc]


def _run(module: ModuleType) -> doctest.TestResults:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS, verbose=False)
    for test in _Finder().find(module):
        runner.run(test)
    return runner.summarize(verbose=False)


def test_examples_of_a_class_a_public_module_claims_are_still_found() -> None:
    from kheaders import Headers
    from kheaders._model import headers

    assert Headers.__module__ == "kheaders"
    found = {t.name for t in _Finder().find(headers) if t.examples}
    assert any(n.startswith("kheaders._model.headers.Headers.") for n in found), found
    assert not any("Headers" in t.name for t in _Finder().find(kheaders) if t.examples)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = _run(module)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_user_docs_examples_hold() -> None:
    path = Path(__file__).resolve().parents[2] / "docs" / "headers.md"
    result = doctest.testfile(str(path), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 20
    assert result.failed == 0, f"{result.failed} examples in docs/headers.md failed"
