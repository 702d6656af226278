"""Deprecated: the old name of :mod:`kheaders.interceptors.message_id` (see the package)."""

from __future__ import annotations

import kheaders.interceptors.message_id as _moved
from kheaders.interceptors.message_id import *  # noqa: F403


def __getattr__(name: str) -> object:
    """Any other name of the module (its private helpers too), as before the move."""
    return getattr(_moved, name)
