"""The change between two benchmark runs, so a regression is visible in review.

``python -m bench --compare OLD.json`` prints it after a run; ``python -m bench.compare
OLD.json NEW.json`` compares two saved ``results.json`` files without running anything.

Ratios (to each group's baseline in the same run) are what is compared first: they are what
the targets are about and they survive a change of machine far better than raw rates, which
are shown too. A target that went from met to missed, or a ratio that fell by more than
``TOLERANCE``, is marked ``REGRESSION``; the opposite ``better``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TOLERANCE = 0.05
"""A ratio moving by less than this fraction is noise on a shared machine, not a change."""


def load(path: Path) -> dict[str, Any]:
    """A results JSON as written by ``python -m bench``; ValueError when it is not one."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("groups"), list):
        raise ValueError(f"{path}: not a bench results file (no 'groups' list)")
    return data


def _contenders(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (g["name"], c["name"]): {**c, "unit": g.get("unit", "records/s")}
        for g in data["groups"]
        for c in g["contenders"]
        if c.get("samples")
    }


def _targets(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["label"]: t for g in data["groups"] for t in g.get("targets", [])}


def _verdict(old: float | None, new: float | None, higher_is_better: bool = True) -> str:
    if old is None or new is None or old == 0:
        return ""
    change = (new - old) / old
    if not higher_is_better:
        change = -change
    if change < -TOLERANCE:
        return "REGRESSION"
    if change > TOLERANCE:
        return "better"
    return ""


def _pct(old: float | None, new: float | None) -> str:
    if old is None or new is None or old == 0:
        return "-"
    return f"{(new - old) / old * 100:+.1f}%"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _rate(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value / 1e6:,.1f} MB/s" if unit == "MB/s" else f"{value:,.0f}/s"


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def compare(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The change from ``old`` to ``new`` (both results JSON): contenders, then targets."""
    lines = [
        f"change against the run of {old.get('started', '?')}"
        f" ({old.get('machine', {}).get('nproc', '?')} CPUs, broker {old.get('broker', '?')})"
        f" -> {new.get('started', '?')} ({new.get('machine', {}).get('nproc', '?')} CPUs,"
        f" broker {new.get('broker', '?')}); ratios are to each group's baseline in the"
        " same run",
        "",
    ]
    old_groups = {g["name"] for g in old["groups"]}
    new_groups = {g["name"] for g in new["groups"]}
    skipped = sorted(old_groups - new_groups)
    before = {k: v for k, v in _contenders(old).items() if k[0] in new_groups}
    after = _contenders(new)
    rows: list[tuple[str, ...]] = [
        ("group", "contender", "ratio before", "ratio now", "change", "rate before", "rate now", "")
    ]
    for key in [*after, *(k for k in before if k not in after)]:
        a, b = before.get(key), after.get(key)
        unit = (b or a or {}).get("unit", "records/s")
        ra = None if a is None else a.get("ratio_to_baseline")
        rb = None if b is None else b.get("ratio_to_baseline")
        note = "new" if a is None else "gone" if b is None else _verdict(ra, rb)
        rows.append(
            (
                key[0],
                key[1],
                _ratio(ra),
                _ratio(rb),
                _pct(ra, rb),
                _rate(None if a is None else a.get("median_rate"), unit),
                _rate(None if b is None else b.get("median_rate"), unit),
                note,
            )
        )
    lines += _table(rows)
    t_after = _targets(new)
    t_before = {
        label: t
        for g in old["groups"]
        if g["name"] in new_groups
        for label, t in _targets({"groups": [g]}).items()
    }
    rows = [("target", "before", "now", "change", "")]
    state = {True: "met", False: "missed", None: "not measured"}
    for label in [*t_after, *(k for k in t_before if k not in t_after)]:
        ta, tb = t_before.get(label), t_after.get(label)
        ra = None if ta is None else ta.get("ratio")
        rb = None if tb is None else tb.get("ratio")
        higher = (tb or ta or {}).get("op", ">=") == ">="
        if ta is None or tb is None:
            note = "new" if ta is None else "gone"
        elif ta.get("met") is True and tb.get("met") is False:
            note = "REGRESSION (was met)"
        elif ta.get("met") is False and tb.get("met") is True:
            note = "now met"
        else:
            note = _verdict(ra, rb, higher)
        rows.append(
            (
                label,
                "-" if ta is None else f"{_ratio(ra)} {state[ta.get('met')]}",
                "-" if tb is None else f"{_ratio(rb)} {state[tb.get('met')]}",
                _pct(ra, rb),
                note,
            )
        )
    lines += ["", *_table(rows)]
    if skipped:
        lines += ["", f"not in this run (left out of the comparison): {', '.join(skipped)}"]
    regressions = sum("REGRESSION" in line for line in lines)
    lines += ["", f"{regressions} regression(s) beyond {TOLERANCE:.0%} or from met to missed"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the change from OLD to NEW; exit 0 (a comparison is information, not a gate)."""
    parser = argparse.ArgumentParser(prog="python -m bench.compare")
    parser.add_argument("old", type=Path, help="an earlier results.json (e.g. bench/latest.json)")
    parser.add_argument("new", type=Path, help="a later results.json")
    args = parser.parse_args(argv)
    try:
        old, new = load(args.old), load(args.new)
    except (OSError, ValueError) as exc:
        print(f"cannot compare: {exc}", file=sys.stderr)
        return 2
    print(compare(old, new))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
