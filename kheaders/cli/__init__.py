"""The ``kheaders`` command line (``kheaders --help``).

Each subcommand lives in its own ``kheaders/cli/_*.py`` module exposing ``register(subparsers)``;
this module only wires them together, importing heavy dependencies lazily.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from kheaders.cli import _broker, _demo, _dlt, _mirror, _pipeline, _tail, _topics

_COMMANDS = (_broker, _demo, _pipeline, _tail, _dlt, _mirror, _topics)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="kheaders",
        description="Kafka record headers made first-class: tools around kheaders.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in _COMMANDS:
        command.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "pass_through", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra_args = extra  # the arguments of a pass-through command (``pipeline``)
    code: int = args.handler(args)
    return code
