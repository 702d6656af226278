"""The support module: records written for Java, and the skip-or-fail switch."""

from __future__ import annotations

import shutil

import pytest

from tests.interop import jvm


def test_a_record_line_keeps_null_empty_and_non_ascii_apart() -> None:
    line = jvm.record_line(None, b"", [("clé", None), ("", b""), ("k", b"\xff")])
    assert line == "~ . Y2zDqQ==:~ .:. aw==:/w==\n"


@pytest.mark.parametrize(("env", "must_fail"), [("", False), ("1", True), ("no", False)])
def test_missing_tools_skip_unless_the_run_requires_the_jvm(
    monkeypatch: pytest.MonkeyPatch, env: str, must_fail: bool
) -> None:
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda tool: None if tool == "mvn" else real(tool))
    monkeypatch.setenv(jvm.REQUIRE_ENV, env)
    why = jvm.unavailable()
    assert why is not None
    reason, fail = why
    assert "mvn not on PATH" in reason
    assert fail is must_fail


def test_nothing_is_missing_when_every_tool_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setenv(jvm.REQUIRE_ENV, "1")
    assert jvm.unavailable() is None
