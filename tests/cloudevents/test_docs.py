"""docs/cloudevents.md: its examples (the specification's own) run in order, in one namespace,
against the real broker, and assert what the text says. The Spark example runs in
tests/spark/test_cloudevents.py."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from kheaders.broker import create_topic

DOC = Path(__file__).resolve().parents[2] / "docs" / "cloudevents.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
SPARK = [b for b in BLOCKS if "kheaders.spark" in b]
TOPICS = ("mytopic", "invoices")

pytestmark = pytest.mark.integration


def test_the_page_has_the_examples_this_file_runs() -> None:
    assert len(BLOCKS) == 12
    assert len(SPARK) == 1


def test_examples_run_and_do_what_the_text_says(bootstrap: str) -> None:
    suffix = uuid.uuid4().hex[:8]
    for topic in TOPICS:
        create_topic(bootstrap, f"{topic}-{suffix}")
    namespace: dict[str, Any] = {"__name__": "cloudevents_doc"}
    for index, block in enumerate(BLOCKS):
        if block in SPARK:
            continue
        code = block.replace("localhost:9092", bootstrap)
        for topic in TOPICS:
            code = re.sub(rf"\b{topic}\b", f"{topic}-{suffix}", code)
        exec(compile(code, f"{DOC.name} example {index}", "exec"), namespace)
