"""Deprecated: the old name of :mod:`kheaders.interceptors.tracing` (see the package)."""

from __future__ import annotations

import kheaders.interceptors.tracing as _moved
from kheaders.interceptors.tracing import *  # noqa: F403


def __getattr__(name: str) -> object:
    """Any other name of the module (its private helpers too), as before the move."""
    return getattr(_moved, name)
