"""Deprecated: the old name of :mod:`kheaders.interceptors.client_id` (see the package)."""

from __future__ import annotations

import kheaders.interceptors.client_id as _moved
from kheaders.interceptors.client_id import *  # noqa: F403


def __getattr__(name: str) -> object:
    """Any other name of the module (its private helpers too), as before the move."""
    return getattr(_moved, name)
