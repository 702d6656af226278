"""``kheaders pipeline``: the Spark pipeline job (``python -m kheaders.spark.pipeline``).

Every argument is handed to :func:`kheaders.spark.pipeline.main`; pyspark is imported only
when the job runs, so ``kheaders pipeline --help`` answers without it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

_DESCRIPTION = (
    "Read a topic through the kheaders Spark data source, compact it by KIP-280 (offset,"
    " timestamp or header strategy), write the state to a topic and/or Parquet, and print the"
    " trace report (hops, client ids, latency per trace id). Needs pyspark"
    " (pip install 'kheaders[spark]')."
)
_MISSING = "kheaders pipeline needs pyspark: pip install 'kheaders[spark]'"


def register(subparsers: Any) -> None:
    """Add the ``pipeline`` subcommand (its options are the pipeline job's own)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "pipeline",
        help="run the Spark pipeline job: KIP-280 compaction and trace report",
        description=_DESCRIPTION,
        add_help=False,
    )
    parser.set_defaults(handler=run, pass_through=True)


def _pyspark_missing() -> bool:
    try:
        import pyspark  # noqa: F401 (only probing)
    except ImportError:
        return True
    return False


def run(args: argparse.Namespace) -> int:
    """Run the pipeline job with the remaining arguments; its exit code."""
    argv: list[str] = list(args.extra_args)
    if _pyspark_missing():
        if not argv or {"-h", "--help"} & set(argv):
            print("usage: kheaders pipeline --bootstrap HOST:PORT --topic TOPIC [options]\n")
            print(_DESCRIPTION)
            print(f"\n{_MISSING} (the full option list is shown once it is installed)")
            return 0
        print(_MISSING, file=sys.stderr)
        return 2
    from kheaders.spark._pipeline_cli import main
    from kheaders.spark._pipeline_cli import parser as job_parser

    if not argv or {"-h", "--help"} & set(argv):
        parser = job_parser()
        parser.prog = "kheaders pipeline"
        parser.print_help()
        return 0 if argv else 2
    return main(argv)
