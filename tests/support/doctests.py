"""doctest over kheaders' modules, finding each class's examples in the module that defines it.

A public class's ``__module__`` names the public module that exports it (``kheaders.Headers``,
not ``kheaders._model.headers``: kheaders._public), so doctest's own finder, which keeps a
class only when its ``__module__`` is the module searched, would skip every example in such a
class's docstring and methods. Use :func:`testmod` instead of ``doctest.testmod``.
"""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any


def defined_in(cls: type, module: ModuleType) -> bool:
    """Whether ``module`` defines ``cls``: its functions' globals tell where it lives."""
    functions = [getattr(v, "__func__", getattr(v, "fget", v)) for v in vars(cls).values()]
    # compiled functions (the optional compiled core) are not inspect functions but keep globals
    globals_ = [g for f in functions if isinstance(g := getattr(f, "__globals__", None), dict)]
    if globals_:
        return any(g is module.__dict__ for g in globals_)
    path = Path(module.__file__ or "")  # a class of attributes only: read its source
    if path.suffix != ".py":  # an extension module of the compiled core: its source beside it
        path = path.with_name(module.__name__.rpartition(".")[2] + ".py")
    source = path.read_text()
    return re.search(rf"^class {cls.__name__}\b", source, re.M) is not None


class DefiningModuleFinder(doctest.DocTestFinder):
    """doctest's finder, finding a class's examples in the module that defines it."""

    def _from_module(self, module: ModuleType, object: object) -> bool:
        if inspect.isclass(object):
            return defined_in(object, module)
        return bool(super()._from_module(module, object))  # type: ignore[misc]


def run_doctests(
    module: ModuleType, *, extraglobs: dict[str, Any] | None = None, optionflags: int = 0
) -> doctest.TestResults:
    """``doctest.testmod(module)`` with :class:`DefiningModuleFinder`; the results."""
    runner = doctest.DocTestRunner(optionflags=optionflags, verbose=False)
    globs = {**module.__dict__, **(extraglobs or {})}
    for test in DefiningModuleFinder().find(module, globs=globs):
        runner.run(test)
    return runner.summarize(verbose=False)
