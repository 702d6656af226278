"""``bench.instructions``: the callgrind harness's contenders run, send and end every span.

The callgrind runs themselves take minutes (they are the benchmark); here each contender runs
once without valgrind, through the same child entry point, on a small record count.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench._icount_child import FakeProducer
from bench.instructions import CONTENDERS, report

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", CONTENDERS)
def test_each_contender_ends_one_span_per_record(name: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "bench._icount_child", name, "300", "300"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_unknown_contender_is_refused() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "bench._icount_child", "nobody", "1", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode != 0
    assert "unknown contender" in done.stderr


def test_fake_producer_serves_reports_with_offsets_in_order() -> None:
    seen: list[tuple[object, int | None]] = []
    p = FakeProducer({})
    for i in range(3):
        p.produce(
            "t", b"v", b"k%d" % i, on_delivery=lambda err, msg: seen.append((err, msg.offset()))
        )
    p.produce("t", b"no callback")
    assert len(p) == 3
    assert p.flush() == 0
    assert seen == [(None, 0), (None, 1), (None, 2)]


def test_report_subtracts_the_sdk_span() -> None:
    text = report({"sdk span only": 100.0, "kheaders span mode": 250.0})
    assert "kheaders span mode" in text
    assert text.splitlines()[-1].split()[-1] == "150"
