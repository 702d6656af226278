"""`python -m bench --quick` runs end to end: table with ratios, results JSON and PNG chart.

No timing is asserted (speed is what the benchmark reports, not what the suite checks), so the
smallest sizes do: 1,000 records, one round (about half the time of the default quick run;
the fixed cost per contender, clients opened and flushed, is most of what remains).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


def test_quick_benchmark_prints_ratios_and_writes_json_and_png(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--quick",
            "--records",
            "1000",  # the smallest run that exercises everything: the warm-up is one round
            "--rounds",
            "1",
            "--no-spark",
            "--out",
            str(tmp_path),
            "--compare",
            str(ROOT / "bench" / "latest.json"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    assert "ratio" in out
    assert "targets:" in out
    assert "change against the run of" in out  # --compare printed the change
    for group in (
        "produce-plain",
        "produce-traced",
        "produce-spans",
        "consume",
        "consume-traced",
        "memory",
        "codec:",
        "metrics:sync",
        "metrics:stream",
    ):
        assert group in out
    data = json.loads((tmp_path / "results.json").read_text())
    groups = {g["name"]: g for g in data["groups"]}
    assert {
        "produce-plain",
        "produce",
        "produce-traced",
        "produce-spans",
        "consume",
        "memory",
        "metrics:sync",
        "metrics:stream",
    } <= set(groups)
    for group in groups.values():
        baseline = next(c for c in group["contenders"] if c["name"] == group["baseline"])
        assert baseline["samples"], group["name"]
        assert baseline["ratio_to_baseline"] == pytest.approx(1.0)
        for contender in group["contenders"]:
            assert contender["error"] is None, (group["name"], contender["error"])
    for name in ("metrics:sync", "metrics:stream"):  # the SDK run counted every record sent
        sdk = next(c for c in groups[name]["contenders"] if c["name"] == "metrics + SDK")
        assert all(s["sent_counted"] == s["count"] for s in sdk["samples"])
    spans = groups["produce-spans"]["contenders"]
    for contender in spans:
        for sample in contender["samples"]:
            assert sample["spans"] == sample["count"]
    assert data["machine"]["nproc"] >= 1
    png = (tmp_path / "results.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
