"""docs/clients.md, "Migrating from confluent-kafka": exactly the deliberate differences."""

from __future__ import annotations

import re
from pathlib import Path

from tests.compat.differences import REASONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "clients.md"


def _section() -> str:
    text = DOC.read_text()
    start = text.index("## Migrating from confluent-kafka")
    return text[start : text.index("\n## ", start + 1)]


def test_every_deliberate_difference_is_documented_and_nothing_else() -> None:
    different = _section().split("**Different, on purpose**", 1)[1]
    named = set(re.findall(r"\(`([a-z_]+)`\)", different))
    assert named == set(REASONS)
