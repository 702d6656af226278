"""docs/processing.md (an ``Elsewhere`` of tests/docs/test_docs_examples.py): the services
run as processes, handle what the text says and stop on SIGTERM; the other blocks build
what they say."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from kheaders.processing import Processor
from tests.processing.helpers import produce, wait_for

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "processing.md"
SHARE = "\n## Share groups (KIP-932)"
"""Where the blocks of tests/share/test_docs_share.py start (the page's last section)."""
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text().split(SHARE)[0], re.S)
GUARD = re.compile(r'\nif __name__ == "__main__":\n    .*\n')


def _localised(code: str, topic: str) -> str:
    return code.replace('"orders"', f'"{topic}"').replace('"billing"', f'"{topic}-g"')


def test_the_document_has_the_blocks_this_test_runs() -> None:
    assert len(BLOCKS) == 5  # the fifth: tests/processing/test_exactly_once_docs.py


@pytest.mark.parametrize("which", ["sync", "async"])
def test_the_service_handles_retries_and_stops_on_sigterm(
    which: str, bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    topic = topic_factory()
    orders = [
        {"id": 1, "amount": 10},
        {"id": 2, "amount": -1},
        {"id": 3, "amount": 5},
    ]
    produce(
        bootstrap,
        topic,
        [{"key": str(o["id"]).encode(), "value": json.dumps(o).encode()} for o in orders],
    )
    sync, run_async = BLOCKS[0], BLOCKS[1]
    code = sync if which == "sync" else GUARD.sub("\n", sync) + run_async
    script = tmp_path / "service.py"
    script.write_text(_localised(code, topic))
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, str(script)],
            env={**os.environ, "KHEADERS_BOOTSTRAP": bootstrap, "PYTHONPATH": str(ROOT)},
            stdout=sink,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for(
                lambda: out.read_text().count("charged order") >= (2 if which == "sync" else 3),
                what="the orders charged",
            )
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    text = out.read_text()
    assert proc.returncode == 0
    assert text.splitlines()[-1] == "stopped"
    if which == "sync":  # id 2 declined (dead letter), id 3 fine
        assert "charged order 1" in text
        assert "charged order 3" in text
        assert "charged order 2" not in text


def test_the_strict_order_and_routing_blocks_build_processors(
    bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    namespace: dict[str, object] = {"__name__": "processing_doc"}
    topic = f"doc-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("KHEADERS_BOOTSTRAP", bootstrap)
    exec(compile(_localised(BLOCKS[0], topic), str(DOC), "exec"), namespace)
    for block in BLOCKS[2:4]:
        exec(compile(_localised(block, topic), str(DOC), "exec"), namespace)
    ledger, router = namespace["ledger"], namespace["router"]
    assert isinstance(ledger, Processor)
    assert isinstance(router, Processor)
