"""``kheaders tail`` against a broker that does not answer: one clear line, within --timeout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tail(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "kheaders.cli",
            "tail",
            "orders",
            "--bootstrap",
            "127.0.0.1:1",
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=9,  # the old behaviour: ten seconds of metadata wait whatever --timeout said
        check=False,
    )


def test_assign_mode_reports_the_broker_in_one_line_and_exits_2() -> None:
    done = _tail("--timeout", "2")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    # the cause librdkafka gave error_cb, not its "Broker transport failure" for the request
    assert lines[0].startswith("kheaders tail: cannot read topic 'orders' from 127.0.0.1:1: ")
    refused = "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused"
    assert refused in lines[0]
    assert done.stdout == ""


def test_group_mode_stops_at_the_timeout_naming_the_last_broker_error() -> None:
    done = _tail("--timeout", "2", "--group", "g")
    assert done.returncode == 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("kheaders tail: no record; last broker error: 127.0.0.1:1/")
    assert "Traceback" not in done.stderr
