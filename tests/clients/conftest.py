"""Fixtures of the client tests."""

from __future__ import annotations

import pytest

from tests.support import interceptors as fx


@pytest.fixture
def clean_recorders() -> None:
    """Start with no recorded interceptor events or instances (tests/support/interceptors.py)."""
    fx.events.clear()
    fx.Recorder.instances.clear()
