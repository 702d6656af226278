"""Every test a page names as the proof of a claim exists: a renamed test leaves no claim bare."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md"))
NAMED = re.compile(r"`(?:tests/[\w/]+\.py::)?(test_\w+)`")
DEFINED = {
    m.group(1)
    for path in (ROOT / "tests").rglob("test_*.py")
    for m in re.finditer(r"^(?:async )?def (test_\w+)", path.read_text(), re.MULTILINE)
}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_test_a_page_names_exists(page: Path) -> None:
    named = set(NAMED.findall(page.read_text()))
    assert sorted(named - DEFINED) == []


def test_the_side_by_side_pages_name_their_tests() -> None:
    for page in ("interceptors.md", "processing.md"):
        assert NAMED.search((ROOT / "docs" / page).read_text()), page
