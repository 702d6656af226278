"""docs/clients.md: its runnable example stays true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kheaders.broker import BOOTSTRAP_ENV

DOC = Path(__file__).resolve().parents[2] / "docs" / "clients.md"


@pytest.mark.integration
def test_first_example_of_clients_doc_runs(monkeypatch: pytest.MonkeyPatch, bootstrap: str) -> None:
    monkeypatch.setenv(BOOTSTRAP_ENV, bootstrap)  # the example's running_broker() reuses ours
    code = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[0]
    exec(compile(code, str(DOC), "exec"), {"__name__": "clients_doc"})
