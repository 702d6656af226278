"""Public classes report the public module that exports them, not the private one that
defines them: ``kheaders.DecodeError`` in tracebacks, reprs, error messages and the
dead-letter ``error.type`` header, never ``kheaders._errors.DecodeError``.

A foundation module, like ``_errors``: each public package's ``__init__`` calls
:func:`claim` once, after its imports.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping


def is_private(module: str) -> bool:
    """True when a component of the dotted ``module`` name starts with ``_``."""
    return any(part.startswith("_") for part in module.split("."))


def claim(module: str, namespace: Mapping[str, object]) -> None:
    """Set ``__module__`` to ``module`` for every class in ``namespace["__all__"]`` whose
    ``__module__`` is private (the first public module to export a class claims it; pickle
    and ``module.QualifiedName`` lookups then go through ``module``, which exports it)."""
    for name in namespace["__all__"]:  # type: ignore[attr-defined]
        obj = namespace[name]
        if isinstance(obj, type) and is_private(obj.__module__):
            obj.__module__ = module


def moved(module: str, homes: Mapping[str, str], since: str) -> Callable[[str], object]:
    """A module ``__getattr__`` for names that left ``module`` or were renamed (``homes``:
    old name -> the full dotted name of the same object now, in a public module): the old
    name still gives that object, with a DeprecationWarning pointing at the line that used
    it; any other name raises AttributeError as usual. The old names stay out of
    ``dir(module)`` and ``__all__``."""

    def moved_name(name: str) -> object:
        new = homes.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        home, _, attribute = new.rpartition(".")
        warnings.warn(
            f"{module}.{name} is {new} since {since}: import that"
            " (the old name goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), attribute)

    return moved_name
