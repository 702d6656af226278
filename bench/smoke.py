"""``python -m bench.smoke``: every benchmark runs end to end on the smallest sizes (a CI stage).

No timing is checked (speed is what the benchmarks report, not what CI checks); what is: each
runs without error and reports what it should. One broker serves them all (found or started
once, as ``python -m bench`` does; ``KHEADERS_BOOTSTRAP`` names one already running):

- ``python -m bench --quick``, 1,000 records, one round, no Spark: the table with ratios and
  targets, the change against ``bench/latest.json``, results JSON and PNG chart, every group's
  contenders without error, one span per record where spans are made, the metrics SDK counting
  every record sent;
- ``python -m bench.protect``, 300 records, one round: every contender's ratio line;
- ``bench._icount_child``, each span-mode contender on 300 records without valgrind (the
  callgrind runs themselves take minutes), and an unknown contender refused;
- ``python -m bench.share`` and ``python -m bench.exactly_once``, 300 records, one round, on
  an Apache Kafka of their own (share groups and transactions are not Tansu's): their ratios.

Exits non-zero naming the first check that failed (the child's output tail included).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.instructions import CONTENDERS

ROOT = Path(__file__).resolve().parent.parent


class SmokeError(Exception):
    """A benchmark did not run end to end, or did not report what it should."""


def _check(ok: bool, what: str, output: str = "") -> None:
    if not ok:
        raise SmokeError(f"{what}\n{output[-3000:]}" if output else what)


def _run(
    args: Sequence[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


def quick(env: dict[str, str], out: Path) -> None:
    """``python -m bench --quick`` on the smallest sizes."""
    done = _run(
        ["-m", "bench", "--quick", "--records", "1000", "--rounds", "1", "--no-spark",
         "--out", str(out), "--compare", str(ROOT / "bench" / "latest.json")],
        env, timeout=600,
    )  # fmt: skip
    text = done.stdout + done.stderr
    _check(done.returncode == 0, f"bench --quick exited {done.returncode}", text)
    for marker in ("ratio", "targets:", "change against the run of"):
        _check(marker in done.stdout, f"bench --quick printed no {marker!r}", text)
    printed = ("produce-plain", "produce-traced", "produce-spans", "consume", "consume-traced",
               "memory", "codec:", "metrics:sync", "metrics:stream")  # fmt: skip
    for group in printed:
        _check(group in done.stdout, f"bench --quick printed no group {group!r}", text)
    data = json.loads((out / "results.json").read_text())
    groups = {g["name"]: g for g in data["groups"]}
    wanted = {"produce-plain", "produce", "produce-traced", "produce-spans", "consume", "memory",
              "metrics:sync", "metrics:stream"}  # fmt: skip
    _check(wanted <= set(groups), f"results.json lacks groups {sorted(wanted - set(groups))}")
    for name, group in groups.items():
        baseline = next(c for c in group["contenders"] if c["name"] == group["baseline"])
        _check(bool(baseline["samples"]), f"{name}: the baseline has no samples")
        _check(abs(baseline["ratio_to_baseline"] - 1.0) < 1e-9, f"{name}: baseline ratio != 1")
        for contender in group["contenders"]:
            _check(contender["error"] is None, f"{name}/{contender['name']}: {contender['error']}")
    for name in ("metrics:sync", "metrics:stream"):
        sdk = next(c for c in groups[name]["contenders"] if c["name"] == "metrics + SDK")
        counted = all(s["sent_counted"] == s["count"] for s in sdk["samples"])
        _check(counted, f"{name}: the metrics SDK did not count every record sent")
    for contender in groups["produce-spans"]["contenders"]:
        for sample in contender["samples"]:
            _check(sample["spans"] == sample["count"], f"produce-spans/{contender['name']}: spans")
    _check(data["machine"]["nproc"] >= 1, "results.json: no machine description")
    png = (out / "results.png").read_bytes()
    _check(png.startswith(b"\x89PNG\r\n\x1a\n"), "results.png is not a PNG")


def protect(env: dict[str, str], bootstrap: str) -> None:
    """``python -m bench.protect`` on 300 records: one ratio line per way and kind."""
    args = ["-m", "bench.protect", "--bootstrap", bootstrap, "--records", "300", "--rounds", "1"]
    done = _run(args, env, timeout=300)
    text = done.stdout + done.stderr
    _check(done.returncode == 0, f"bench.protect exited {done.returncode}", text)
    lines = [line.split()[:2] for line in done.stdout.splitlines() if "x serialized" in line]
    kinds = ("plain", "serialized", "encrypted", "encrypted+signed")
    expected = [[way, kind] for way in ("produce", "consume") for kind in kinds]
    _check(lines == expected, f"bench.protect printed {lines}", text)


def instructions(env: dict[str, str]) -> None:
    """Each callgrind contender's child runs once without valgrind; a stranger is refused."""
    for name in CONTENDERS:
        done = _run(["-m", "bench._icount_child", name, "300", "300"], env, timeout=300)
        _check(done.returncode == 0, f"bench._icount_child {name!r} failed", done.stderr)
    done = _run(["-m", "bench._icount_child", "nobody", "1", "1"], env, timeout=300)
    refused = done.returncode != 0 and "unknown contender" in done.stderr
    _check(refused, "bench._icount_child accepted an unknown contender", done.stderr)


def on_apache_kafka(env: dict[str, str]) -> None:
    """``bench.share`` and ``bench.exactly_once`` on 300 records, one round, on Apache Kafka
    (share groups and transactions are not Tansu's): each exits 0 having printed its table."""
    from kheaders.broker import find_or_start_broker

    kafka = find_or_start_broker(local="apache")
    try:
        for module in ("bench.share", "bench.exactly_once"):
            args = ["-m", module, "--bootstrap", kafka.bootstrap, "--records", "300"]
            done = _run([*args, "--rounds", "1"], env, timeout=600)
            text = done.stdout + done.stderr
            _check(done.returncode == 0, f"{module} exited {done.returncode}", text)
            _check("x, cpu" in done.stdout, f"{module} printed no ratio", text)
    finally:
        kafka.stop()


def main() -> int:
    from kheaders.broker import find_or_start_broker

    broker = find_or_start_broker()
    env = {
        **os.environ,
        "KHEADERS_BOOTSTRAP": broker.bootstrap,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    try:
        with tempfile.TemporaryDirectory(prefix="bench-smoke-") as out:
            steps: list[tuple[str, Callable[[], None]]] = [
                ("bench --quick", lambda: quick(env, Path(out))),
                ("bench.protect", lambda: protect(env, broker.bootstrap)),
                ("bench.instructions children", lambda: instructions(env)),
                ("bench.share, bench.exactly_once (Apache Kafka)", lambda: on_apache_kafka(env)),
            ]
            for name, step in steps:
                print(f"bench smoke: {name}", flush=True)
                step()
    except SmokeError as failure:
        print(f"bench smoke failed: {failure}", file=sys.stderr)
        return 1
    finally:
        broker.stop()
    print("bench smoke: every benchmark ran end to end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
