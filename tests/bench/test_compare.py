"""``--compare``: the change between two runs' results JSON, regressions marked.

The results are built with the harness's own data model and ``to_json`` (what
``python -m bench`` writes), so the comparison reads exactly the files a run leaves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench._model import Contender, Group, Sample, Target
from bench._report import ContenderResult, GroupResult, to_json
from bench._runner import parse_args
from bench.compare import compare, load

ROOT = Path(__file__).resolve().parents[2]


def results(rates: dict[str, dict[str, float]], started: str) -> dict[str, Any]:
    """Results JSON for groups {name: {contender: rate}}; the first contender is the baseline."""
    out = []
    for name, contenders in rates.items():
        names = list(contenders)
        group = Group(
            name=name,
            title=name,
            baseline=names[0],
            contenders=[Contender(c, None) for c in names],
            targets=[Target(f"{name} >= 0.9x", names[1], names[0], ">=", 0.9)],
            count=1000,
        )
        crs = [
            ContenderResult(c, True, "", samples=[Sample(1000 / rate, 1000, 1.0)])
            for c, rate in contenders.items()
        ]
        out.append(GroupResult(group, crs))
    return to_json(out, {"started": started, "machine": {"nproc": 2}, "broker": "embedded"})


OLD = results(
    {
        "produce": {"raw": 100_000, "kheaders": 95_000},
        "spans": {"otel": 10_000, "kheaders": 8_000},
        "gone-group": {"raw": 1.0, "kheaders": 1.0},
    },
    "2026-01-01T00:00:00",
)
NEW = results(
    {
        "produce": {"raw": 200_000, "kheaders": 160_000},  # 0.95x -> 0.80x: met -> missed
        "spans": {"otel": 10_000, "kheaders": 12_000},  # 0.80x -> 1.20x: now met
        "consume-traced": {"by hand": 1.0, "kheaders": 1.0},
    },
    "2026-01-02T00:00:00",
)


def line(text: str, *starts: str) -> str:
    """The one line whose first words are ``starts`` (a target label counts as its words)."""
    words = [w for s in starts for w in s.split()]
    found = [ln for ln in text.splitlines() if ln.split()[: len(words)] == words]
    assert len(found) == 1, (starts, text)
    return found[0]


def test_ratio_changes_and_regressions_are_marked() -> None:
    out = compare(OLD, NEW)
    assert "2026-01-01T00:00:00" in out
    assert "2026-01-02T00:00:00" in out
    produce = line(out, "produce", "kheaders")
    assert "0.95x" in produce
    assert "0.80x" in produce
    assert "-15.8%" in produce
    assert produce.endswith("REGRESSION")
    assert line(out, "spans", "kheaders").endswith("better")
    assert line(out, "produce >= 0.9x").endswith("REGRESSION (was met)")
    assert line(out, "spans >= 0.9x").endswith("now met")
    assert "2 regression(s)" in out


def test_new_groups_are_marked_and_groups_not_run_are_left_out() -> None:
    out = compare(OLD, NEW)
    assert line(out, "consume-traced", "kheaders").endswith("new")
    assert "gone-group" not in out.split("not in this run")[0]
    assert "not in this run (left out of the comparison): gone-group" in out


def test_unchanged_run_has_no_regression() -> None:
    out = compare(NEW, NEW)
    assert "REGRESSION" not in out.replace("0 regression(s)", "")
    assert "0 regression(s)" in out


def test_compare_command_reads_two_files(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(OLD), encoding="utf-8")
    new.write_text(json.dumps(NEW), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "bench.compare", str(old), str(new)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "REGRESSION (was met)" in done.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="not a bench results file"):
        load(bad)


def test_the_committed_latest_run_loads() -> None:
    data = load(ROOT / "bench" / "latest.json")
    assert "0 regression(s)" in compare(data, data)


def test_bench_rejects_a_missing_compare_file(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--compare", str(tmp_path / "missing.json")])
    assert parse_args(["--compare", str(ROOT / "bench" / "latest.json")]).compare is not None
