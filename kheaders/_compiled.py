"""Which core runs: the Cython-compiled modules, or the Python they are compiled from.

The modules in :data:`MODULES` are plain Python; the build (``hatch_build.py``) compiles them
as they are where a C compiler is present, and writes :data:`MANIFEST` beside them: each
extension's file name and the SHA-256 of the source (``.py`` and its ``.pxd``) it was built
from. At import, the compiled core is used only when every extension is there and built from
the sources present; otherwise every listed module is imported from its ``.py`` (all or
none, so one answer holds for the process):

- ``KHEADERS_NO_EXTENSIONS`` set (to anything but ``""`` or ``0``): pure Python, silently;
- no manifest or an extension missing (no compiler at build, or another interpreter): pure
  Python, silently (the build said so);
- a source edited after the build (an editable install): pure Python and one
  RuntimeWarning naming the file; ``pip install -e .`` again rebuilds.

Imported first by ``kheaders/__init__.py``, before any listed module.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

MODULES = (
    "kheaders._model.headers",
    "kheaders._model.keys",
    "kheaders._model.limits",
    "kheaders._model.received",
    "kheaders._model.traceparent",
    "kheaders.aio._delivery",
    "kheaders._client.records",
    "kheaders._client.reports",
    "kheaders._client.chain",
    "kheaders._client.sending",
)
"""The modules the build compiles (``hatch_build.py`` reads this tuple)."""

TWINS = ("kheaders._model._traceparent_c",)
"""The C twins the build compiles from their ``.pyx`` (``hatch_build.py`` reads this tuple):
imported only by :mod:`kheaders._speedups`, and only when the compiled core is in use; each
has a Python twin (``_c`` becomes ``_py``) that the pure-Python core runs."""

MANIFEST = "_compiled.json"
"""The build's record of what it compiled, in the package directory."""

ENV = "KHEADERS_NO_EXTENSIONS"
"""Set to force the pure-Python core (at build and at import)."""

PACKAGE = Path(__file__).resolve().parent


def disabled(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """True when ``KHEADERS_NO_EXTENSIONS`` asks for the pure-Python core."""
    return environ.get(ENV, "") not in ("", "0")


def source_path(module: str) -> Path:
    """The source of a ``kheaders.*`` module the build compiles: ``.pyx`` for a C twin,
    else ``.py``."""
    return PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(
        ".pyx" if module in TWINS else ".py"
    )


def source_hash(module: str) -> str:
    """SHA-256 of a module's source as compiled: its ``.py`` (``.pyx``), then its ``.pxd``
    if any."""
    digest = hashlib.sha256()
    py = source_path(module)
    for path in (py, py.with_suffix(".pxd")):
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _stale_or_missing() -> tuple[list[str], list[str]]:
    """The listed modules whose extension is missing, and those built from other sources."""
    try:
        manifest = json.loads((PACKAGE / MANIFEST).read_text(encoding="utf-8"))
        built: dict[str, dict[str, str]] = manifest["modules"]
    except (OSError, ValueError, KeyError, TypeError):
        return list(MODULES + TWINS), []
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    missing: list[str] = []
    stale: list[str] = []
    for module in MODULES + TWINS:
        entry = built.get(module)
        extension = source_path(module).with_suffix(suffix)
        if entry is None or entry.get("file") != extension.name or not extension.is_file():
            missing.append(module)
        elif entry.get("sha256") != source_hash(module):
            stale.append(module)
    return missing, stale


class _PureFinder:
    """Imports the listed modules from their ``.py`` files (ahead of any extension)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in MODULES:
            return None
        return importlib.util.spec_from_file_location(fullname, source_path(fullname))


def _choose() -> bool:
    if disabled():
        use = False
    else:
        missing, stale = _stale_or_missing()
        use = not missing and not stale
        if stale:
            names = ", ".join(str(source_path(m).relative_to(PACKAGE.parent)) for m in stale)
            warnings.warn(
                f"kheaders: the compiled core is older than {names}; using the pure-Python"
                " core (rebuild it with pip install -e .)",
                RuntimeWarning,
                stacklevel=3,
            )
    if not use and not any(isinstance(f, _PureFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PureFinder())
    return use


COMPILED: bool = _choose()
"""True when the compiled core is in use (re-exported as ``kheaders.COMPILED``)."""
