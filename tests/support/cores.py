"""Both cores in one process, for the ``core`` fixture (``tests/conftest.py``).

The compiled core and the pure-Python core are the same modules under the same names (Cython
compiles the ``.py`` files as they are), so one process holds both as two sets of
``kheaders``/``interceptors`` modules: the set ``import`` gives, and a twin set loaded once
from the sources with ``KHEADERS_NO_EXTENSIONS=1`` (its ``kheaders._compiled`` says pure, its
``kheaders._speedups`` chose the Python twins). Only what depends on the core is loaded twice:
the compiled modules, every module that imports one of them (transitively), and their
packages; the rest (``kheaders._errors``, ``Header``, the codecs, ...) is one module for both,
so an exception or a ``Header`` is one class whichever core made it.

:func:`active` makes a set the one the test sees: ``sys.modules`` holds it (so a test's own
``import`` and kheaders' lazy imports find it) and the globals of every ``tests`` module (the
test's, its helpers', the conftests') that name an object of the other set are pointed at
their twin for the duration of the test (and the test's arguments, as :func:`twin_of` maps them).
The items of a dict, list or tuple a module holds are mapped too (one level); what is built
deeper at import (a Hypothesis strategy over ``Headers``) stays what it was built from: the
set imported first.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from kheaders._compiled import COMPILED, ENV, MODULES, _PureFinder, source_path

CORES = ("pure", "compiled")
"""The ``core`` fixture's parameters."""
IMPORTED = "compiled" if COMPILED else "pure"
"""The core ``import kheaders`` gives in this process."""

_ROOTS = ("kheaders", "interceptors")
_twice: set[str] = set()
"""The modules loaded once per core (see :func:`_depending`)."""


def _ours(name: str) -> bool:
    return name in _twice


def _current() -> dict[str, ModuleType]:
    return {name: m for name, m in list(sys.modules.items()) if _ours(name) and m is not None}


def _imports(module: ModuleType) -> set[str]:
    """The ``kheaders``/``interceptors`` modules ``module``'s source imports (anywhere in it)."""
    name = module.__name__
    path = Path(str(getattr(module, "__file__", "") or ""))
    source = path if path.suffix == ".py" else (source_path(name) if name in MODULES else None)
    if source is None or not source.is_file():
        return set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {n for n in found if n.partition(".")[0] in _ROOTS}


def _with_packages(names: set[str]) -> set[str]:
    out = set(names)
    for name in names:
        parts = name.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return out


_twice.update(_with_packages({*MODULES, "kheaders._compiled", "kheaders._speedups"}))
# (the two modules that say which core runs and choose its twins, imported by name)
_seen: set[str] = set()


def _classify() -> None:
    """Add to :data:`_twice` the modules imported since the last call that import one of
    it (transitively), with their packages."""
    new = {
        n: m
        for n, m in list(sys.modules.items())
        if n.partition(".")[0] in _ROOTS and m is not None and n not in _seen
    }
    if not new:
        return
    _seen.update(new)
    imports = {name: _imports(module) for name, module in new.items()}
    grew = True
    while grew:
        more = {name for name, used in imports.items() if used & _twice} - _twice
        grew = bool(more)
        _twice.update(_with_packages(more))


@dataclass
class Core:
    """One core: its name and its set of modules."""

    name: str
    modules: dict[str, ModuleType] = field(repr=False)

    @property
    def compiled(self) -> bool:
        """True for the compiled core."""
        return self.name == "compiled"

    def module(self, name: str) -> ModuleType:
        """The module ``name`` of this core (imported into its set when first asked)."""
        found = self.modules.get(name)
        if found is None:
            with active(self):
                found = importlib.import_module(name)
        return found


_cores: dict[str, Core] = {}


def _load_pure_twin() -> dict[str, ModuleType]:
    """Import the modules that depend on the core again, from source."""
    _classify()
    everything = {n: m for n, m in list(sys.modules.items()) if n.partition(".")[0] in _ROOTS and m}
    first = _current()
    for name in first:
        del sys.modules[name]
    finder = _PureFinder()
    sys.meta_path.insert(0, finder)
    before = os.environ.get(ENV)
    os.environ[ENV] = "1"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in ["kheaders", *MODULES, *sorted(first)]:
                with contextlib.suppress(ImportError):
                    importlib.import_module(name)
    finally:
        if before is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = before
        twin = _current()
        for name in twin:
            del sys.modules[name]
        sys.modules.update(first)
        for name, module in everything.items():  # a shared module in a package loaded twice
            parent, _, child = name.rpartition(".")
            if name not in _twice and parent in twin:
                setattr(twin[parent], child, module)
        sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "_PureFinder"]
    return twin


def get(name: str) -> Core | None:
    """The core ``name`` (``"pure"`` or ``"compiled"``); ``None`` when it was not built."""
    if name not in _cores:
        if name == "compiled":
            if not COMPILED:
                return None
            _cores[name] = Core(name, _current())
        elif COMPILED:
            _cores[name] = Core(name, _load_pure_twin())
        else:  # the pure-Python core is what import gives
            _cores[name] = Core(name, _current())
    core = _cores[name]
    if name == IMPORTED:
        core.modules.update(_current())  # what was imported since, in the set import gives
    return core


_twins: dict[int, tuple[object, object]] = {}
_twins_of: tuple[int, int] = (0, 0)


def _map(
    first: dict[str, ModuleType], second: dict[str, ModuleType]
) -> dict[int, tuple[object, object]]:
    """By ``id``: each module of ``first`` and each of its globals that differs in ``second``,
    with the object of ``second`` of the same name."""
    global _twins, _twins_of
    if _twins_of == (len(first), len(second)) and _twins:
        return _twins
    twins: dict[int, tuple[object, object]] = {}
    for name, mine in first.items():
        theirs = second.get(name)
        if theirs is None:
            continue
        twins[id(mine)] = (mine, theirs)
        other = vars(theirs)
        for attr, value in vars(mine).items():
            if attr.startswith("__"):
                continue
            twin = other.get(attr, value)
            if twin is not value and id(value) not in twins:
                twins[id(value)] = (value, twin)
    _twins, _twins_of = twins, (len(first), len(second))
    return twins


def twin_of(value: Any, twins: dict[int, tuple[object, object]]) -> Any:
    """``value``'s twin in the other set, else ``value``."""
    pair = twins.get(id(value))
    return pair[1] if pair is not None and pair[0] is value else value


def _test_modules(test_module: ModuleType | None) -> list[ModuleType]:
    """The test's module and every module of ``tests`` (helpers, conftests, other tests)."""
    found = [m for n, m in list(sys.modules.items()) if n.startswith("tests.") and m is not None]
    if test_module is not None and test_module not in found:
        found.append(test_module)
    return found


@contextlib.contextmanager
def active(
    core: Core, test_module: ModuleType | None = None
) -> Iterator[dict[int, tuple[object, object]]]:
    """Run the block with ``core``'s modules (see the module doc); yields the map from the
    set ``import`` gives to ``core``'s (empty when ``core`` is that set)."""
    _classify()
    first = _current()
    if all(core.modules.get(name) is m for name, m in first.items()):
        yield {}
        return
    twins = _map(first, core.modules)
    patched: list[tuple[Any, Any, object]] = []  # (container, key, value it held)
    for module in _test_modules(test_module):
        namespace = vars(module)
        for attr, value in list(namespace.items()):
            twin = twin_of(value, twins)
            if type(value) is tuple:  # one level into the containers a test module builds
                twin = tuple(twin_of(x, twins) for x in value)
                twin = value if all(a is b for a, b in zip(twin, value, strict=True)) else twin
            elif type(value) is dict or type(value) is list:
                keys = value.keys() if type(value) is dict else range(len(value))
                for key in list(keys):
                    inner = value[key]
                    inner_twin = twin_of(inner, twins)
                    if inner_twin is not inner:
                        patched.append((value, key, inner))
                        value[key] = inner_twin
            if twin is not value:
                patched.append((namespace, attr, value))
                namespace[attr] = twin
    for name in first:
        del sys.modules[name]
    sys.modules.update(core.modules)
    finder = _PureFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield twins
    finally:
        sys.meta_path.remove(finder)
        _classify()  # what the block imported: this core's when it depends on the core
        for name, module in _current().items():
            core.modules.setdefault(name, module)
            del sys.modules[name]
        sys.modules.update(first)
        for container, key, value in reversed(patched):
            container[key] = value


def current() -> Core:
    """The core whose modules the running test sees (``sys.modules``' ``kheaders``)."""
    for core in _cores.values():
        if core.modules.get("kheaders") is sys.modules.get("kheaders"):
            return core
    found = get(IMPORTED)
    assert found is not None
    return found


def is_compiled(module: ModuleType) -> bool:
    """True when ``module`` was loaded from an extension, not from Python source."""
    return not str(module.__file__).endswith(".py")


# -- one compiled module beside its .py, under another name (tests/aio/test_compiled_aio.py) --


def installed(name: str) -> ModuleType:
    """What ``import name`` gives (the extension where the compiled core is in use)."""
    return importlib.import_module(name)


def pure(name: str) -> ModuleType:
    """The ``.py`` of compiled module ``name``, loaded (once) as ``<name>_pure``: its own
    imports are the installed modules. Kept for ``tests/aio/test_compiled_aio.py`` until its
    module is tested through the ``core`` fixture."""
    alias = f"{name}_pure"
    module = sys.modules.get(alias)
    if module is None:
        spec = importlib.util.spec_from_file_location(alias, source_path(name))
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[alias] = module
        spec.loader.exec_module(module)
    return module
