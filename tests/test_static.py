"""The package stays mypy --strict and ruff clean (run as part of the suite so CI enforces it)."""

from __future__ import annotations

import ast
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


# Modules that still read Headers' fields directly, each until its owner switches it to the
# internal API of kheaders/_model/headers.py (received, trusted, pairs_of, the read_only
# property). Remove a module from this list when it no longer does: the test says so.
_HEADERS_FIELDS_PENDING: frozenset[str] = frozenset()


def _headers_private_names() -> frozenset[str]:
    from kheaders._model.headers import Headers

    names = set(Headers.__slots__) | set(vars(Headers))
    return frozenset(n for n in names if n.startswith("_") and not n.endswith("__"))


def _private_headers_uses(path: Path, private: frozenset[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in private
    ]


def test_no_module_reads_headers_private_fields() -> None:
    """Only kheaders/_model/headers.py touches Headers' fields; others use its internal API."""
    private = _headers_private_names()
    assert "_read_only" in private
    owner = ROOT / "kheaders" / "_model" / "headers.py"
    found: dict[str, list[str]] = {}
    for top in ("kheaders", "interceptors", "bench", "examples", "tests"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path != owner:
                uses = _private_headers_uses(path, private)
                if uses:
                    found[path.relative_to(ROOT).as_posix()] = uses
    unexpected = [
        use for name, uses in found.items() if name not in _HEADERS_FIELDS_PENDING for use in uses
    ]
    assert not unexpected, (
        "use the internal API of kheaders/_model/headers.py instead:\n" + "\n".join(unexpected)
    )
    stale = sorted(_HEADERS_FIELDS_PENDING - found.keys())
    assert not stale, f"no longer read Headers' fields: remove from the pending list: {stale}"
