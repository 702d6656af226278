"""The processing drivers as one fixture: a test taking ``driver`` runs on each of them, as
the client tests run on each produce path (tests/clients/conftest.py). ``driver`` is what
``helpers.make`` takes: ``"sync"`` (Processor), ``"async"`` (AIOProcessor) and
``"async-4"`` (AIOProcessor with concurrency=4: records of one key in order, keys at once).
The fixture runs the first two; a test where concurrency changes the path takes all three
(``@pytest.mark.parametrize("driver", ALL)``), and a test about one driver's own behaviour
names it."""

from __future__ import annotations

import pytest

from tests.processing.helpers import ALL


@pytest.fixture(params=ALL[:2])
def driver(request: pytest.FixtureRequest) -> str:
    """Each processing driver in turn."""
    return str(request.param)
