"""`python -m bench.protect` runs end to end and prints every contender's ratios (no timing is
asserted: speed is what the benchmark reports, not what the suite checks)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


def test_protect_benchmark_prints_ratios(bootstrap: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    args = ["--bootstrap", bootstrap, "--records", "300", "--rounds", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "bench.protect", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if "x serialized" in line]
    kinds = ("plain", "serialized", "encrypted", "encrypted+signed")
    assert [line.split()[:2] for line in lines] == [
        [way, kind] for way in ("produce", "consume") for kind in kinds
    ]
