"""Instructions per record (callgrind): stable where wall-clock ratios are not (a busy machine).

``python -m bench.instructions [--records N]`` runs each contender of the span-mode
comparison in its own interpreter under ``valgrind --tool=callgrind`` twice, with ``N``
records and with none (same setup and warm-up), and reports the difference per record.
librdkafka is replaced by a fake that queues records and serves their delivery reports
(``bench._icount_child``), so only the Python side is counted, identically for everyone.

``sdk span only`` is one PRODUCER span started and ended with the same SDK and exporter
and nothing else: subtracted from a contender, it leaves the contender's own instructions
outside the SDK's minimum (attributes and context handling included, as each chooses them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTENDERS = ("sdk span only", "otel instrumentation", "kheaders span mode")
TRACED = ("traced bare", "traced by hand", "traced kheaders")
"""``--group traced``: the ``produce-traced`` loops (bare, by hand, kheaders' interceptors)."""
_COLLECTED = re.compile(r"Collected : (\d+)")


def available() -> bool:
    """True when valgrind is on PATH."""
    return shutil.which("valgrind") is not None


def _count(name: str, n: int, size: int) -> int:
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "bench._icount_child",
        name,
        str(n),
        str(size),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600, check=False
    )
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{name}: callgrind run failed: {done.stderr[-2000:]}")
    return int(found.group(1))


def measure(records: int = 2000, names: tuple[str, ...] = CONTENDERS) -> dict[str, float]:
    """Instructions per record of each contender (``N`` records minus none, over ``N``)."""
    return {
        name: (_count(name, records, records) - _count(name, 0, records)) / records
        for name in names
    }


def report(counts: dict[str, float]) -> str:
    """A table: instructions per record, and each contender's own share beyond the SDK."""
    sdk = counts.get("sdk span only")
    bare = counts.get("traced bare")
    base, title = (sdk, "own (beyond sdk span)") if bare is None else (bare, "beyond bare")
    lines = [f"{'contender':<24} {'instructions/record':>20} {title:>22}"]
    for name, value in counts.items():
        baseline = base is None or name in {"sdk span only", "traced bare"}
        own = "" if baseline else f"{value - base:,.0f}"
        lines.append(f"{name:<24} {value:>20,.0f} {own:>22}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure and print; ``--json PATH`` also writes the figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.instructions")
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--group",
        choices=("spans", "traced"),
        default="spans",
        help="spans: span mode vs OTel (default); traced: the produce-traced loops",
    )
    parser.add_argument("--only", default=None, help="comma-separated contender names")
    args = parser.parse_args(argv)
    if not available():
        print("valgrind is not installed", file=sys.stderr)
        return 1
    names = CONTENDERS if args.group == "spans" else TRACED
    if args.only:
        names = tuple(n for n in names if n in args.only.split(","))
    counts = measure(args.records, names)
    print(report(counts))
    if args.json is not None:
        args.json.write_text(json.dumps(counts, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
