"""Every function, class and method the build compiles is pinned compiled == pure.

For each module in ``kheaders._compiled.MODULES``, every ``def`` and ``class`` its source
defines (at module level, in classes, and under module-level ``if``/``try``; not what it
imports, not nested functions, which run as part of their enclosing one) must be named, as a
dotted ``module.Class.method``, in the ``PINNED`` set of some ``tests/**/test_compiled_*.py``:
the claim that a Hypothesis property there calls it on both cores and compares. Helpers a
``.pxd`` makes C functions (``cdef``) are not callable from Python; they are pinned by name
through the function that calls them.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from pathlib import Path

from kheaders._compiled import MODULES, source_path
from tests.support.cores import pure

TESTS = Path(__file__).resolve().parent


def _defined(body: list[ast.stmt], prefix: str) -> Iterator[str]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name
        elif isinstance(node, ast.ClassDef):
            yield prefix + node.name
            yield from _defined(node.body, f"{prefix}{node.name}.")
        elif isinstance(node, ast.If):
            yield from _defined(node.body + node.orelse, prefix)
        elif isinstance(node, ast.Try):
            handlers = [s for h in node.handlers for s in h.body]
            yield from _defined(node.body + handlers + node.orelse + node.finalbody, prefix)


def defined(module: str) -> set[str]:
    """Dotted names of what ``module``'s source defines (overloads counted once)."""
    tree = ast.parse(source_path(module).read_text(encoding="utf-8"))
    return {f"{module}.{name}" for name in _defined(tree.body, "")}


def pinned() -> dict[str, set[str]]:
    """Each ``PINNED`` name of the ``test_compiled_*.py`` files, with the files naming it."""
    found: dict[str, set[str]] = {}
    for path in sorted(TESTS.rglob("test_compiled_*.py")):
        spec = importlib.util.spec_from_file_location(f"_pinned_{path.stem}", path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        names: frozenset[str] = getattr(module, "PINNED", frozenset())
        assert isinstance(names, frozenset), f"{path}: PINNED must be a frozenset[str]"
        for name in names:
            found.setdefault(name, set()).add(str(path.relative_to(TESTS.parent)))
    return found


def test_the_lister_finds_what_a_module_defines() -> None:
    names = defined("kheaders._model.traceparent")
    assert "kheaders._model.traceparent.parse_traceparent" in names
    assert "kheaders._model.traceparent.TraceParent.header" in names
    assert not any(name.endswith(".re") or name.endswith(".Headers") for name in names)


def test_every_name_defined_resolves_on_the_python_module() -> None:
    """A sanity check of the lister: each name is an attribute path of the ``.py`` module."""
    missing = []
    for module in MODULES:
        loaded = pure(module)
        for name in defined(module):
            obj: object = loaded
            for part in name[len(module) + 1 :].split("."):
                obj = getattr(obj, part, None)
            if obj is None:
                missing.append(name)
    assert not missing, missing


def test_every_compiled_function_class_and_method_is_pinned() -> None:
    known = pinned()
    unpinned = sorted(name for module in MODULES for name in defined(module) - set(known))
    assert not unpinned, (
        f"{len(unpinned)} compiled names have no compiled == pure property; add one to a"
        " tests/**/test_compiled_*.py and its name to that file's PINNED:\n  "
        + "\n  ".join(unpinned)
    )


def test_pinned_names_are_compiled_names() -> None:
    """A name in PINNED that no compiled module defines is a typo or a renamed function."""
    everything = {name for module in MODULES for name in defined(module)}
    stray = {name: files for name, files in pinned().items() if name not in everything}
    assert not stray, stray
