"""``python -m bench``: find or start a broker, run the groups in rounds, report medians.

Each round runs every contender of a group once, in alternating order (forward, then
reversed), after one untimed warm-up run each. Medians over the rounds are reported.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._groups import GROUP_NAMES, groups, selected
from bench._model import Env, Group
from bench._report import (
    ContenderResult,
    GroupResult,
    chart,
    machine,
    markdown,
    table,
    to_json,
    write_json,
)

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results"


def _log(message: str) -> None:
    print(message, flush=True)


def run_group(group: Group, rounds: int, *, freeze: bool = False) -> GroupResult:
    """Warm up, then ``rounds`` rounds in alternating order; errors are kept, not raised.

    ``freeze``: move every object alive before the group (imports, the harness, earlier
    groups' leftovers) out of the garbage collector's reach (``gc.freeze()``) for its runs.
    """
    if freeze:
        gc.collect()
        gc.freeze()
    try:
        return _run_group(group, rounds)
    finally:
        if freeze:
            gc.unfreeze()


def _run_group(group: Group, rounds: int) -> GroupResult:
    results = [ContenderResult(c.name, c.run is not None, c.note) for c in group.contenders]
    runnable = [(c, r) for c, r in zip(group.contenders, results, strict=True) if c.run]
    # never more than a round: a consume group's topic holds ``count`` records, and a warm-up
    # reading more would wait for records that never come (``--records`` below 2,000)
    warmup = min(group.warmup, group.count)
    if warmup:
        for c, r in runnable:
            try:
                c.run(warmup)  # type: ignore[misc]
            except Exception as exc:
                r.error = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
    n_rounds = min(rounds, group.max_rounds or rounds)
    for i in range(n_rounds):
        order = runnable if i % 2 == 0 else runnable[::-1]
        for c, r in order:
            if r.error:
                continue
            try:
                sample = c.run(group.count)  # type: ignore[misc]
            except Exception as exc:
                r.error = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
                continue
            r.samples.append(sample)
            shown = sample.rate / 1e6 if group.unit == "MB/s" else sample.rate
            _log(
                f"  [{group.name}] round {i + 1}/{n_rounds} {c.name:<26}"
                f" {shown:>12,.1f} {group.unit}  {sample.seconds:6.2f}s"
                f"  peak {sample.peak_rss_mb:7.1f} MiB"
            )
    return GroupResult(group, results)


def _profile_misses(result: GroupResult) -> dict[str, str]:
    """cProfile reports for the contenders of ``result`` that missed a throughput target."""
    from bench.profile import profile_contenders

    missed = [
        tr.target.contender
        for tr in result.targets()
        if tr.met is False and tr.target.metric == "rate"
    ]
    if not missed:
        return {}
    _log(f"== profiling {', '.join(missed)} ({result.group.name})")
    return profile_contenders(result.group, sorted(set(missed)))


def _spark(quick: bool, out: Path) -> dict[str, Any]:
    """Run the Spark benchmarks of bench/spark_*.py (written by the Spark helpers) if present.

    A module's ``run(quick) -> dict`` is used when it has one; otherwise its ``main(argv)``
    with ``--json`` pointing into ``out`` (and small counts under ``--quick``), whose JSON is
    read back.
    """
    out_dict: dict[str, Any] = {}
    if importlib.util.find_spec("pyspark") is None:
        return {"skipped": "pyspark is not importable"}
    quick_args = {
        "spark_read": ["--records", "20000", "--repeats", "1"],
        "spark_compact": ["--rows", "200000", "--keys", "20000", "--repeats", "1"],
    }
    for module in ("spark_read", "spark_compact"):
        if not (HERE / f"{module}.py").exists():
            out_dict[module] = {"skipped": f"bench/{module}.py is not in this checkout"}
            continue
        _log(f"== spark: bench.{module} (quick={quick})")
        # Each in its own process: its own JVM, with the driver memory that benchmark sets
        # (a shared session keeps the first one's heap; the compaction run needs more).
        path = out / f"{module}.json"
        cmd = [sys.executable, "-m", f"bench.{module}", "--json", str(path)]
        cmd += quick_args[module] if quick else []
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
        done = subprocess.run(cmd, cwd=HERE.parent, env=env, check=False)
        if done.returncode == 0 and path.exists():
            out_dict[module] = json.loads(path.read_text(encoding="utf-8"))
        else:
            out_dict[module] = {"error": f"bench.{module} exited {done.returncode}"}
    return out_dict


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="kheaders vs raw confluent-kafka, OpenTelemetry's instrumentation and kio.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small counts (CI): seconds, not minutes"
    )
    parser.add_argument(
        "--records",
        type=int,
        default=None,
        help="records per contender per round (default 200,000; quick 20,000)",
    )
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 5; quick 3)")
    parser.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="GROUP",
        help=f"run only these groups (repeat or comma-separate): {', '.join(GROUP_NAMES)}; "
        "codec:NAME for one codec",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="directory for results JSON and PNG"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="afterwards, profile (cProfile) each kheaders contender that missed a target",
    )
    parser.add_argument(
        "--no-spark", action="store_true", help="skip the Spark benchmarks (bench/spark_*.py)"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        default=None,
        metavar="RESULTS.json",
        help="afterwards, print the change against an earlier run (e.g. bench/latest.json)",
    )
    parser.add_argument(
        "--broker",
        choices=("embedded", "apache"),
        default="embedded",
        help="the local broker to start when KHEADERS_BOOTSTRAP is unset and no Docker engine"
        " answers: the embedded Tansu (default) or Apache Kafka itself (Java and Maven)",
    )
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() the process's objects before each group (GC sensitivity check)",
    )
    args = parser.parse_args(argv)
    if args.compare is not None and not args.compare.is_file():
        parser.error(f"--compare: no such file {args.compare}")
    if args.only:
        args.only = [o.strip() for item in args.only for o in item.split(",") if o.strip()]
        unknown = [o for o in args.only if o.split(":")[0] not in GROUP_NAMES]
        if unknown:
            parser.error(
                f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUP_NAMES)}"
            )
    if args.records is None:
        args.records = 20_000 if args.quick else 200_000
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    if args.records < 1 or args.rounds < 1:
        parser.error("--records and --rounds must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the suite; print the table; write results.json and results.png. Exit 1 on errors."""
    args = parse_args(argv)
    from kheaders.broker import find_or_start_broker

    started = datetime.now(UTC)
    t0 = time.perf_counter()
    info = machine()
    _log(
        f"machine: {info['nproc']} CPUs ({info['cpu']}), Python {info['python']},"
        f" confluent-kafka {info['confluent_kafka']} / librdkafka {info['librdkafka']}"
    )
    results: list[GroupResult] = []
    spark: dict[str, Any] | None = None
    profiles: dict[str, str] = {}
    broker = find_or_start_broker(local=args.broker)
    _log(f"broker: {broker.kind} at {broker.bootstrap}")
    env = Env(broker.bootstrap, records=args.records, quick=args.quick)
    try:
        for group in groups(env, args.only):
            _log(f"== {group.name}: {group.title} ({group.count:,} per run)")
            try:
                result = run_group(group, args.rounds, freeze=args.gc_freeze)
                results.append(result)
                if args.profile:
                    profiles |= _profile_misses(result)
            finally:
                if group.close is not None:
                    group.close()
    finally:
        env.close()
        broker.stop()
    run_spark = not args.no_spark and (
        selected("spark", args.only) if args.only else not args.quick
    )
    if run_spark:
        args.out.mkdir(parents=True, exist_ok=True)
        spark = _spark(args.quick, args.out)

    args.out.mkdir(parents=True, exist_ok=True)
    subtitle = (
        f"{info['nproc']} CPUs {info['cpu']}, Python {info['python']}, confluent-kafka"
        f" {info['confluent_kafka']}, broker {broker.kind}; {args.records:,} records x"
        f" {args.rounds} rounds, medians"
    )
    report = table(results)
    print()
    print(report)
    data = to_json(
        results,
        {
            "started": started.isoformat(timespec="seconds"),
            "duration_s": round(time.perf_counter() - t0, 1),
            "settings": {
                "quick": args.quick,
                "records": args.records,
                "rounds": args.rounds,
                "only": args.only,
                "gc_freeze": args.gc_freeze,
            },
            "machine": info,
            "broker": broker.kind,
            "spark": spark,
            "profiles": profiles,
        },
    )
    json_path = args.out / "results.json"
    png_path = args.out / "results.png"
    write_json(json_path, data)
    (args.out / "results.md").write_text(markdown(data), encoding="utf-8")
    chart(png_path, results, subtitle)
    print(f"\nwrote {json_path} and {png_path} ({data['duration_s']} s)")
    if args.compare is not None:
        from bench.compare import compare, load

        print()
        print(compare(load(args.compare), data))
    errors = [f"{gr.group.name}/{c.name}" for gr in results for c in gr.contenders if c.error]
    if errors:
        print(f"errors in: {', '.join(errors)}", file=sys.stderr)
        return 1
    return 0
