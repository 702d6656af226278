"""Summaries of the runs: medians and ratios, the printed table, results JSON and the PNG chart."""

from __future__ import annotations

import json
import math
import os
import platform
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from bench._model import Group, Sample, Target, median


@dataclass
class ContenderResult:
    """A contender's samples over the rounds and their medians."""

    name: str
    available: bool
    note: str
    samples: list[Sample] = field(default_factory=list)
    error: str | None = None

    @property
    def rate(self) -> float:
        """Median items per second."""
        return median([s.rate for s in self.samples])

    @property
    def peak_rss(self) -> float:
        """Median peak memory (MiB): growth during the run, or the child's ``ru_maxrss``."""
        return median([s.peak_rss_mb for s in self.samples])

    def extra(self) -> dict[str, float]:
        """Median of each extra figure."""
        keys = {k for s in self.samples for k in s.extra}
        return {k: median([s.extra[k] for s in self.samples if k in s.extra]) for k in sorted(keys)}


@dataclass
class TargetResult:
    """A target's ratio in this run and whether it is met (``None``: not measured)."""

    target: Target
    ratio: float | None

    @property
    def met(self) -> bool | None:
        """True when the ratio satisfies the target."""
        if self.ratio is None:
            return None
        t = self.target
        return self.ratio >= t.threshold if t.op == ">=" else self.ratio <= t.threshold


@dataclass
class GroupResult:
    """A group's contenders and targets after the run."""

    group: Group
    contenders: list[ContenderResult]

    def get(self, name: str) -> ContenderResult | None:
        """The contender called ``name``."""
        return next((c for c in self.contenders if c.name == name), None)

    def ratio(self, name: str, baseline: str | None = None, metric: str = "rate") -> float | None:
        """``metric(name) / metric(baseline)`` (medians), or ``None`` if either is missing."""
        a = self.get(name)
        b = self.get(baseline or self.group.baseline)
        if a is None or b is None or not a.samples or not b.samples:
            return None
        x, y = (a.rate, b.rate) if metric == "rate" else (a.peak_rss, b.peak_rss)
        return x / y if y else None

    def targets(self) -> list[TargetResult]:
        """Every target of the group with its ratio."""
        return [
            TargetResult(t, self.ratio(t.contender, t.baseline, t.metric))
            for t in self.group.targets
        ]


def machine() -> dict[str, Any]:
    """Where the figures come from: CPU, cores, Python and library versions."""
    import confluent_kafka

    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass

    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "confluent_kafka": version("confluent-kafka") or str(confluent_kafka.version()),
        "librdkafka": confluent_kafka.libversion()[0],
        "opentelemetry_sdk": version("opentelemetry-sdk"),
        "otel_instrumentation_confluent_kafka": version(
            "opentelemetry-instrumentation-confluent-kafka"
        ),
        "kio": version("kio"),
    }


def _fmt_rate(value: float, unit: str) -> str:
    return f"{value:,.1f}" if unit == "MB/s" else f"{value:,.0f}"


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def table(results: list[GroupResult]) -> str:
    """The results as a plain-text table, then the targets with met/missed."""
    rows = [("group", "contender", "rate", "unit", "ratio", "peak MiB", "notes")]
    for gr in results:
        unit = gr.group.unit
        for c in gr.contenders:
            if c.error:
                rows.append((gr.group.name, c.name, "error", unit, "-", "-", c.error[:60]))
                continue
            if not c.samples:
                rows.append((gr.group.name, c.name, "-", unit, "-", "-", c.note or "not run"))
                continue
            rate = c.rate / 1e6 if unit == "MB/s" else c.rate
            notes = "baseline" if c.name == gr.group.baseline else ""
            extra = c.extra()
            if "gc_us" in extra:
                notes = (notes + f" gc={extra['gc_us']:.2f}µs/item").strip()
            if "cpu_us" in extra:
                notes = (notes + f" cpu={extra['cpu_us']:.1f}µs/item").strip()
            if "spans" in extra:
                notes = (notes + f" spans={extra['spans']:,.0f}").strip()
            if "baseline_mb" in extra:
                notes = (notes + f" rss after import={extra['baseline_mb']:.0f}MiB").strip()
            rows.append(
                (
                    gr.group.name,
                    c.name,
                    _fmt_rate(rate, unit),
                    unit,
                    _fmt_ratio(gr.ratio(c.name)),
                    f"{c.peak_rss:.1f}",
                    notes,
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {2, 4, 5}
    lines = []
    for n, row in enumerate(rows):
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append("targets:")
    for gr in results:
        for tr in gr.targets():
            t = tr.target
            state = {True: "MET", False: "MISSED", None: "not measured"}[tr.met]
            metric = "peak RSS" if t.metric == "peak_rss" else "throughput"
            lines.append(
                f"  {t.label:<40} {metric} {t.contender} / {t.baseline} = "
                f"{_fmt_ratio(tr.ratio)} (need {t.op} {t.threshold}) {state}"
            )
    return "\n".join(lines)


def to_json(results: list[GroupResult], extra: dict[str, Any]) -> dict[str, Any]:
    """The results as plain data (every sample kept, medians and ratios computed)."""
    groups = []
    for gr in results:
        contenders = []
        for c in gr.contenders:
            contenders.append(
                {
                    "name": c.name,
                    "available": c.available,
                    "note": c.note,
                    "error": c.error,
                    "median_rate": c.rate,
                    "median_peak_rss_mb": c.peak_rss,
                    "ratio_to_baseline": gr.ratio(c.name),
                    "extra": c.extra(),
                    "samples": [
                        {
                            "seconds": s.seconds,
                            "count": s.count,
                            "rate": s.rate,
                            "peak_rss_mb": s.peak_rss_mb,
                            **s.extra,
                        }
                        for s in c.samples
                    ],
                }
            )
        groups.append(
            {
                "name": gr.group.name,
                "title": gr.group.title,
                "unit": gr.group.unit,
                "rate_unit": "bytes/s" if gr.group.unit == "MB/s" else "records/s",
                "baseline": gr.group.baseline,
                "count": gr.group.count,
                "contenders": contenders,
                "targets": [
                    {
                        "label": tr.target.label,
                        "contender": tr.target.contender,
                        "baseline": tr.target.baseline,
                        "metric": tr.target.metric,
                        "op": tr.target.op,
                        "threshold": tr.target.threshold,
                        "ratio": tr.ratio,
                        "met": tr.met,
                    }
                    for tr in gr.targets()
                ],
            }
        )
    return {**extra, "groups": groups}


def markdown(data: dict[str, Any]) -> str:
    """A Markdown summary of results JSON (as written by :func:`to_json`): table and targets."""
    m = data.get("machine", {})
    settings = data.get("settings", {})
    lines = [
        f"Machine: {m.get('nproc')} CPUs ({m.get('cpu')}), Python {m.get('python')},"
        f" confluent-kafka {m.get('confluent_kafka')} / librdkafka {m.get('librdkafka')},"
        f" opentelemetry-sdk {m.get('opentelemetry_sdk')}, instrumentation"
        f" {m.get('otel_instrumentation_confluent_kafka')}, kio {m.get('kio')};"
        f" broker: {data.get('broker')}. {settings.get('records', 0):,} records per contender"
        f" per round, {settings.get('rounds')} rounds, medians; run {data.get('started')}"
        f" ({data.get('duration_s')} s).",
        "",
        "| group | contender | rate | ratio | peak MiB | GC µs/item |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for g in data["groups"]:
        mb = g["unit"] == "MB/s"
        for c in g["contenders"]:
            if not c["samples"]:
                lines.append(f"| {g['name']} | {c['name']} | {c['error'] or c['note']} | | | |")
                continue
            rate = c["median_rate"] / 1e6 if mb else c["median_rate"]
            shown = f"{rate:,.1f} MB/s" if mb else f"{rate:,.0f} rec/s"
            base = " (baseline)" if c["name"] == g["baseline"] else ""
            gc_us = c["extra"].get("gc_us")
            ratio = _fmt_ratio(c["ratio_to_baseline"])
            gc_text = "" if gc_us is None else f"{gc_us:.2f}"
            lines.append(
                f"| {g['name']} | {c['name']}{base} | {shown} | {ratio}"
                f" | {c['median_peak_rss_mb']:.1f} | {gc_text} |"
            )
    lines += ["", "| target | ratio | needed | |", "|---|---:|---:|---|"]
    for g in data["groups"]:
        for t in g["targets"]:
            state = {True: "met", False: "**missed**", None: "not measured"}[t["met"]]
            need = f"{t['op']} {t['threshold']}"
            lines.append(f"| {t['label']} | {_fmt_ratio(t['ratio'])} | {need} | {state} |")
    return "\n".join(lines) + "\n"


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON."""
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")


_GREY, _BLUE, _GREEN, _RED = "#9e9e9e", "#5c8fd6", "#3a9d5d", "#d0543e"


def _colour(gr: GroupResult, name: str) -> str:
    if name == gr.group.baseline:
        return _GREY
    verdicts = [tr.met for tr in gr.targets() if tr.target.contender == name]
    if not verdicts or any(v is None for v in verdicts):
        return _BLUE
    return _GREEN if all(verdicts) else _RED


_LINE_STYLES = (":", "--", "-.", (0, (1, 4)))
_LEGEND: dict[str, Any] = {
    "fontsize": 6,
    "loc": "upper left",
    "bbox_to_anchor": (0.0, -0.2),
    "frameon": False,
    "ncol": 2,
}
_COLOUR_NAMES = {
    _GREY: "baseline (ratios are to it)",
    _GREEN: "kheaders: its targets met",
    _RED: "kheaders: a target missed",
    _BLUE: "no target (context)",
}


def _colour_handles(colours: set[str]) -> list[Any]:
    """Legend entries for the bar colours used in a panel, in a fixed order."""
    from matplotlib.patches import Patch

    return [Patch(color=c, label=name) for c, name in _COLOUR_NAMES.items() if c in colours]


def chart(path: Path, results: list[GroupResult], subtitle: str) -> None:
    """Draw one panel per group (bars: median rate, label: ratio); codecs share one panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [gr for gr in results if not gr.group.name.startswith("codec:")]
    codecs = [gr for gr in results if gr.group.name.startswith("codec:")]
    count = len(panels) + (1 if codecs else 0)
    cols = min(3, max(count, 1))
    rows = max(1, math.ceil(count / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.6 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax, gr in zip(flat, panels, strict=False):
        memory = any(t.metric == "peak_rss" for t in gr.group.targets)
        names = [c.name for c in gr.contenders if c.samples]
        if memory:
            values = [gr.get(n).peak_rss for n in names]  # type: ignore[union-attr]
            xlabel = "peak RSS, MiB (lower is better)"
            ratios = [gr.ratio(n, metric="peak_rss") for n in names]
        else:
            values = [gr.get(n).rate for n in names]  # type: ignore[union-attr]
            xlabel = "records/s (median)"
            ratios = [gr.ratio(n) for n in names]
        y = range(len(names))
        ax.barh(list(y), values, color=[_colour(gr, n) for n in names])
        ax.set_yticks(list(y), names)
        ax.invert_yaxis()
        ax.set_title(f"{gr.group.name}: {gr.group.title}", fontsize=10)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.tick_params(labelsize=8)
        top = max(values, default=1.0) or 1.0
        for t in gr.group.targets:  # a target line beyond every bar stays inside the panel
            base = gr.get(t.baseline)
            if base is not None and base.samples and t.metric == ("peak_rss" if memory else "rate"):
                top = max(top, (base.peak_rss if memory else base.rate) * t.threshold)
        ax.set_xlim(0, top * 1.2)
        for i, (v, r) in enumerate(zip(values, ratios, strict=True)):
            ax.text(v + top * 0.02, i, _fmt_ratio(r), va="center", fontsize=8)
        metric = "peak_rss" if memory else "rate"
        lines = []
        for t, style in zip(
            [t for t in gr.group.targets if t.metric == metric], _LINE_STYLES, strict=False
        ):
            base = gr.get(t.baseline)
            if base is not None and base.samples:
                ref = base.peak_rss if memory else base.rate
                lines.append(
                    ax.axvline(
                        ref * t.threshold,
                        color="black",
                        linestyle=style,
                        linewidth=1,
                        label=f"target {t.label} ({t.op} {t.threshold}x {t.baseline})",
                    )
                )
        ax.legend(
            handles=_colour_handles({_colour(gr, n) for n in names}) + lines,
            **_LEGEND,
        )
    if codecs:
        ax = flat[len(panels)]
        names = [gr.group.name.removeprefix("codec:") for gr in codecs]
        codec_ratios = [gr.ratio("kheaders") or 0.0 for gr in codecs]
        y = range(len(names))
        ax.barh(
            list(y),
            codec_ratios,
            color=[_GREEN if r >= 1.0 else _RED for r in codec_ratios],
        )
        ax.set_yticks(list(y), names)
        ax.invert_yaxis()
        line = ax.axvline(
            1.0, color="black", linestyle=":", linewidth=1, label="target 5: >= 1.0x kio"
        )
        ax.legend(
            handles=[*_colour_handles({_GREEN if r >= 1.0 else _RED for r in codec_ratios}), line],
            **_LEGEND,
        )
        ax.set_title("codecs: kheaders MB/s / kio MB/s", fontsize=10)
        ax.set_xlabel("ratio (> 1: kheaders faster)", fontsize=8)
        ax.tick_params(labelsize=8)
        top = max(codec_ratios, default=1.0) or 1.0
        ax.set_xlim(0, max(top, 1.0) * 1.25)
        for i, r in enumerate(codec_ratios):
            ax.text(r + top * 0.02, i, _fmt_ratio(r), va="center", fontsize=8)
    for ax in flat[count:]:
        ax.axis("off")
    fig.suptitle(
        "kheaders vs raw confluent-kafka / OTel instrumentation / kio "
        "(bars: contenders, named on the left; legends: colours and target lines)\n" + subtitle,
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
