"""Stands in for Cython's ``cython`` module where Cython is not installed (plain Python).

A compiled module imports ``cython`` (the compiler reads that import itself: pure-Python
mode) and falls back to this module; ``cython.compiled`` is then False. Only what the
compiled modules use is here.
"""

from __future__ import annotations

compiled = False
"""True only inside a module the build compiled."""
