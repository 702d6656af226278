"""The one place where the two cores differ: which twin of a C-accelerated step runs.

The compiled core is the package's Python compiled by Cython as it is (``kheaders._compiled``
lists the modules); no module forks on ``cython.compiled``. Where C pays beyond compiled
Python, the step has two twins with one contract, as multidict keeps ``_multidict_py.py``
beside its C: ``<name>_py.py`` (the reference, run by the pure-Python core) and
``<name>_c.pyx`` (built with the compiled core, listed in ``kheaders._compiled.TWINS``).
This module chooses, once, from :data:`kheaders._compiled.COMPILED`; callers import the
chosen functions from here.

- :func:`valid55`, :func:`fields55`, :func:`lone_value`: reading a record's ``traceparent``
  (``kheaders/_model/_traceparent_py.py``, ``_traceparent_c.pyx``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from kheaders._compiled import COMPILED

__all__ = ["fields55", "lone_value", "valid55"]

_traceparent = importlib.import_module(
    "kheaders._model._traceparent_c" if COMPILED else "kheaders._model._traceparent_py"
)
valid55: Callable[[bytes], bool] = _traceparent.valid55
fields55: Callable[[bytes], tuple[int, int, int, int]] = _traceparent.fields55
lone_value: Callable[[list[Any], str], object] = _traceparent.lone_value
