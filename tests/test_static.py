"""The package stays mypy --strict and ruff clean (run as part of the suite so CI enforces it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


def test_mypy_strict_is_clean() -> None:
    result = _run(sys.executable, "-m", "mypy", "--strict", "kheaders", "interceptors")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.fail("ruff is not installed: it is part of the dev extra")
    result = _run(ruff, "check", "kheaders", "interceptors")
    assert result.returncode == 0, result.stdout + result.stderr


def test_layer_contracts_hold() -> None:
    """The import contracts in pyproject.toml (layers, no kheaders -> interceptors imports)."""
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.fail("import-linter is not installed: it is part of the dev extra")
    result = _run(str(lint), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_package_ships_py_typed() -> None:
    assert (ROOT / "kheaders" / "py.typed").is_file()
    assert (ROOT / "interceptors" / "py.typed").is_file()
