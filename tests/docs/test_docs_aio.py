"""docs/aio.md: every example runs against the real broker and prints what its text says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kheaders.broker import BOOTSTRAP_ENV, create_topic

DOC = Path(__file__).resolve().parents[2] / "docs" / "aio.md"
EXAMPLES = [
    code
    for code in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    if "signal.SIGTERM" not in code  # runs until stopped: tests/docs/test_docs_shutdown.py
]
TOPICS = ("aio-doc", "aio-doc-in", "aio-doc-traced")


def _expected(code: str) -> list[str]:
    """What the example's comments say its prints print."""
    return [m.strip() for m in re.findall(r"print\(.*\)\s+# (.*)", code)]


@pytest.mark.integration
@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_aio_doc_example_runs_and_prints_what_it_says(
    index: int,
    monkeypatch: pytest.MonkeyPatch,
    bootstrap: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(BOOTSTRAP_ENV, bootstrap)
    for topic in TOPICS:
        create_topic(bootstrap, topic)
    code = EXAMPLES[index]
    exec(compile(code, str(DOC), "exec"), {"__name__": "aio_doc"})
    printed = capsys.readouterr().out.splitlines()
    expected = _expected(code)
    assert expected, "an example says what it prints"
    assert [p.strip() for p in printed] == expected
