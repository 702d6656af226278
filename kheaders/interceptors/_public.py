"""Public classes report the public module that exports them (``kheaders.interceptors.tracing``),
not the private one that defines them (``kheaders.interceptors._tracing_producer``), as kheaders'
own do: in reprs, error messages and the dead-letter ``error.type`` header."""

from __future__ import annotations

from collections.abc import Mapping


def claim(module: str, namespace: Mapping[str, object]) -> None:
    """Set ``__module__`` to ``module`` for every class in ``namespace["__all__"]`` that a
    private module defines."""
    for name in namespace["__all__"]:  # type: ignore[attr-defined]
        obj = namespace[name]
        if isinstance(obj, type) and any(p.startswith("_") for p in obj.__module__.split(".")):
            obj.__module__ = module
