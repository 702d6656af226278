from __future__ import annotations

import subprocess
import sys

import pytest

from kheaders.cli import build_parser


def test_every_subcommand_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    with pytest.raises(SystemExit) as excinfo:
        parser.parse_args(["--help"])
    assert excinfo.value.code == 0
    assert "broker" in capsys.readouterr().out


def test_broker_command_prints_its_address_and_stops_on_sigterm() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "kheaders.cli", "broker"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("bootstrap.servers=127.0.0.1:")
        assert proc.stdout.readline().startswith("cluster.id=kheaders-")
        hint = proc.stdout.readline()  # a first consumer: why it waits, and what joins fast
        assert "23 s" in hint
        assert "kheaders.broker.fast_consumer_config(bootstrap, group_id)" in hint
    finally:
        proc.terminate()
        assert proc.wait(20) == 0
