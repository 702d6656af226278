"""docs/protect.md: its examples run in order, in one namespace, against the real broker, and
print what their comments say."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

import pytest

from kheaders.broker import BOOTSTRAP_ENV, create_topic

DOC = Path(__file__).resolve().parents[2] / "docs" / "protect.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def _expected(code: str) -> list[str]:
    """What the example's comments say its prints print."""
    return [m.strip() for m in re.findall(r"print\(.*\)\s+# (.*)", code)]


@pytest.mark.integration
def test_protect_doc_examples_run_and_print_what_they_say(
    monkeypatch: pytest.MonkeyPatch, bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert len(EXAMPLES) == 4
    monkeypatch.setenv(BOOTSTRAP_ENV, bootstrap)
    topic = f"payments-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    create_topic(bootstrap, topic + "-dlt")
    saved = dict(os.environ)
    namespace: dict[str, object] = {"__name__": "protect_doc"}
    try:
        for code in EXAMPLES:
            exec(compile(code.replace('"payments', f'"{topic}'), str(DOC), "exec"), namespace)
            printed = [p.strip() for p in capsys.readouterr().out.splitlines()]
            expected = _expected(code)
            assert expected, "an example says what it prints"
            assert printed == expected
    finally:
        os.environ.clear()
        os.environ.update(saved)
