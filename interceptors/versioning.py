"""Deprecated: the old name of :mod:`kheaders.interceptors.versioning` (see the package)."""

from __future__ import annotations

import kheaders.interceptors.versioning as _moved
from kheaders.interceptors.versioning import *  # noqa: F403


def __getattr__(name: str) -> object:
    """Any other name of the module (its private helpers too), as before the move."""
    return getattr(_moved, name)
