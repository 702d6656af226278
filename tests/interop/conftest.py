"""The JVM side, built once per session: skipped without Java/Maven unless KHEADERS_REQUIRE_JVM."""

from __future__ import annotations

import pytest

from tests.interop.jvm import REQUIRE_ENV, Jvm, build, jvm_required, missing_tools


@pytest.fixture(scope="session")
def jvm() -> Jvm:
    """interop/jvm, resolved and compiled (cached across sessions)."""
    missing = missing_tools()
    if missing:
        reason = f"interop tests need a JDK and Maven: {', '.join(missing)} not on PATH"
        if jvm_required():
            pytest.fail(f"{reason} ({REQUIRE_ENV} is set)")
        pytest.skip(reason)
    return build()
