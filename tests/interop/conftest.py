"""The JVM side, built once per session: skipped without Java/Maven unless KHEADERS_REQUIRE_JVM."""

from __future__ import annotations

import pytest

from tests.interop.jvm import Jvm, build, unavailable


@pytest.fixture(scope="session")
def jvm() -> Jvm:
    """interop/jvm, resolved and compiled (cached across sessions)."""
    why = unavailable()
    if why is not None:
        reason, must_fail = why
        if must_fail:
            pytest.fail(reason)
        pytest.skip(reason)
    return build()
