"""Both implementations of a compiled module: the one kheaders imports, and its ``.py``.

``installed(name)`` is what ``import`` gives (the extension when the compiled core is in use);
``pure(name)`` loads the module's ``.py`` under another name (``<name>_pure``), so both can be
called side by side in one process, as multidict and propcache test theirs.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from kheaders._compiled import MODULES, source_path

CORES = ("installed", "pure")


def installed(name: str) -> ModuleType:
    return importlib.import_module(name)


def pure(name: str) -> ModuleType:
    """The module's Python source, loaded (once) as ``<name>_pure``."""
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


def core(kind: str, name: str) -> ModuleType:
    """``installed(name)`` or ``pure(name)``."""
    assert name in MODULES, name
    return installed(name) if kind == "installed" else pure(name)


def is_compiled(module: ModuleType) -> bool:
    """True when ``module`` was loaded from an extension, not from Python source."""
    return not str(module.__file__).endswith(".py")


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """What a call gives: ``("ok", result)``, or its error's type name and message."""
    try:
        return ("ok", call())
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def agree(module: str, function: str, *args: Any) -> tuple[str, Any]:
    """Call ``function`` of both cores of ``module`` with ``args``; assert they agree (result,
    or error type and message); return the outcome."""
    a = outcome(lambda: getattr(installed(module), function)(*args))
    b = outcome(lambda: getattr(pure(module), function)(*args))
    assert a == b, (function, args)
    return a
