"""The README's self-contained example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_headers_in_thirty_seconds_runs_and_ends_read_only() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    namespace: dict[str, object] = {}
    exec(blocks[0], namespace)
    headers = namespace["h"]
    assert headers.read_only  # type: ignore[attr-defined]
    assert headers.values("trace") == [b"abc", b"def"]  # type: ignore[attr-defined]


def test_readme_names_the_ci_test_command() -> None:
    command = (
        "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/python -m pytest"
    )
    assert command in (README.parent / ".ci" / "run").read_text()
    assert command in README.read_text()
