"""Fixtures of the client tests."""

from __future__ import annotations

import pytest

from tests.clients.paths import PATHS, ProducePath
from tests.clients.paths import produce_path as make_path
from tests.support import interceptors as fx


@pytest.fixture
def clean_recorders() -> None:
    """Start with no recorded interceptor events or instances (tests/support/interceptors.py)."""
    fx.events.clear()
    fx.Recorder.instances.clear()


@pytest.fixture(params=PATHS)
def produce_path(request: pytest.FixtureRequest) -> ProducePath:
    """Each produce path in turn (tests/clients/paths.py): a test taking it runs on all."""
    return make_path(str(request.param))
