"""Deprecated: the old name of :mod:`kheaders.deadletter.spring` (a DeprecationWarning on
import, pointing at the importing line; removed in the next release)."""

from __future__ import annotations

import warnings

import kheaders.deadletter.spring as _moved
from kheaders.deadletter.spring import *  # noqa: F403
from kheaders.deadletter.spring import __all__  # noqa: F401 - re-exported

warnings.warn(
    "kheaders.processing.spring_headers moved to kheaders.deadletter.spring; the old name"
    " will be removed in the next release",
    DeprecationWarning,
    stacklevel=2,  # the importing line: warn() skips the import system's frames
)


def __getattr__(name: str) -> object:
    """Any other name of the module, as before the move."""
    return getattr(_moved, name)
