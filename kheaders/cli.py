"""The ``kheaders`` command line (``kheaders --help``).

Each subcommand lives in its own ``kheaders/_cmd_*.py`` module exposing ``register(subparsers)``;
this module only wires them together, importing heavy dependencies lazily.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kheaders import _cmd_broker, _cmd_demo, _cmd_pipeline, _cmd_tail

_COMMANDS = (_cmd_broker, _cmd_demo, _cmd_pipeline, _cmd_tail)


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


if __name__ == "__main__":
    sys.exit(main())
