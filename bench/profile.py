"""Where a kheaders contender's time goes: cProfile, reported in µs per record.

``python -m bench.profile GROUP [--records N]`` profiles every kheaders contender of GROUP
(e.g. ``produce``, ``consume``, ``codec:headers-decode``); ``python -m bench --profile`` does
it for each contender that missed a target. The clock is the calling thread's CPU time
(``time.thread_time``), so other processes on a busy machine do not distort the figures and
time spent waiting (on the broker, in ``flush()``) is not counted; librdkafka's own threads
are not seen. cProfile adds a fixed cost per Python call, so pure-Python frames look heavier
than they are: compare frames with each other, take absolute speed from the benchmark. The
garbage collector's time is charged to whichever call allocated when it ran (often
``__new__``), so the report also gives the GC time measured directly. The profile covers
the contender's whole run, its untimed setup and checks included (making inputs, reading the
topic's tail): read the rows of the timed work.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from pathlib import Path

from bench._model import Contender, Env, Group

TOP = 25


def _where(func: tuple[str, int, str]) -> str:
    filename, line, name = func
    if filename == "~":
        return name  # a C function: "<method 'produce' of 'cimpl.Producer' objects>"
    parts = Path(filename).parts
    for anchor in ("kheaders", "interceptors", "bench", "opentelemetry", "confluent_kafka", "json"):
        if anchor in parts:
            i = len(parts) - 1 - parts[::-1].index(anchor)
            return f"{'/'.join(parts[i:])}:{line}:{name}"
    return f"{Path(filename).name}:{line}:{name}"


def profile_contender(group: Group, contender: Contender, count: int | None = None) -> str:
    """Profile one run of ``contender``; return the report (top functions, µs per item)."""
    assert contender.run is not None
    n = count or group.count
    contender.run(max(n // 10, 1000))  # warm-up, unprofiled
    prof = cProfile.Profile(time.thread_time)
    sample = prof.runcall(contender.run, n)
    items = int(sample.extra.get("items", n))
    stats = pstats.Stats(prof)
    rows = []
    for func, (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((tottime, cumtime, ncalls, _where(func)))
    rows.sort(reverse=True)
    total_tt: float = stats.total_tt  # type: ignore[attr-defined]
    out = io.StringIO()
    out.write(
        f"{group.name} / {contender.name}: {items:,} items, {sample.seconds:.2f} s under cProfile"
        f" = {sample.seconds / items * 1e6:.2f} µs/item (total profiled"
        f" {total_tt / items * 1e6:.2f} CPU µs/item); garbage collector"
        f" {sample.extra.get('gc_us', 0.0):.2f} µs/item, {sample.extra.get('gc_full', 0):.0f}"
        " full collections\n"
    )
    out.write(f"{'self µs/item':>12} {'cum µs/item':>12} {'calls/item':>10}  where (CPU time)\n")
    for tottime, cumtime, ncalls, where in rows[:TOP]:
        out.write(
            f"{tottime / items * 1e6:12.3f} {cumtime / items * 1e6:12.3f}"
            f" {ncalls / items:10.2f}  {where}\n"
        )
    return out.getvalue()


def profile_contenders(group: Group, names: list[str], count: int | None = None) -> dict[str, str]:
    """Profile the named contenders of ``group``; print and return their reports."""
    reports = {}
    for c in group.contenders:
        if c.name in names and c.run is not None:
            text = profile_contender(group, c, count)
            print(text, flush=True)
            reports[f"{group.name}/{c.name}"] = text
    return reports


def main(argv: list[str] | None = None) -> int:
    """Profile the kheaders contenders of one group against a broker found or started here."""
    from bench._groups import groups
    from kheaders.broker import find_or_start_broker

    parser = argparse.ArgumentParser(prog="python -m bench.profile")
    parser.add_argument("group", help="produce, produce-traced, produce-spans, consume, codec:NAME")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    broker = find_or_start_broker()
    env = Env(broker.bootstrap, records=args.records, quick=False)
    reports: dict[str, str] = {}
    try:
        for group in groups(env, [args.group]):
            try:
                names = [c.name for c in group.contenders if c.name.startswith("kheaders")]
                reports |= profile_contenders(group, names, args.records)
            finally:
                if group.close is not None:
                    group.close()
    finally:
        env.close()
        broker.stop()
    if args.out is not None:
        args.out.write_text("\n".join(reports.values()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
