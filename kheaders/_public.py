"""Public classes report the public module that exports them, not the private one that
defines them: ``kheaders.DecodeError`` in tracebacks, reprs, error messages and the
dead-letter ``error.type`` header, never ``kheaders._errors.DecodeError``.

A foundation module, like ``_errors``: each public package's ``__init__`` calls
:func:`claim` once, after its imports.
"""

from __future__ import annotations

from collections.abc import Mapping


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
