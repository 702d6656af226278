"""``kheaders pipeline`` delegates to the Spark job; ``--help`` answers with or without pyspark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NO_PYSPARK = "import sys\nsys.modules['pyspark'] = None  # import pyspark -> ImportError\n"


def _kheaders(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = f"{prelude}import sys\nfrom kheaders.cli import main\nsys.exit(main({list(args)!r}))"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("command", ["broker", "demo", "pipeline", "tail", "mirror"])
def test_every_subcommand_answers_help(command: str) -> None:
    result = _kheaders(command, "--help")
    assert result.returncode == 0, result.stderr
    assert f"kheaders {command}" in result.stdout


def test_pipeline_help_lists_the_jobs_options() -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
    result = _kheaders("pipeline", "--help")
    assert result.returncode == 0, result.stderr
    for option in ("--bootstrap", "--topic", "--strategy", "--output-topic", "--parquet"):
        assert option in result.stdout


def test_pipeline_help_works_without_pyspark() -> None:
    result = _kheaders("pipeline", "--help", prelude=NO_PYSPARK)
    assert result.returncode == 0, result.stderr
    assert "usage: kheaders pipeline" in result.stdout
    assert "pip install 'kheaders[spark]'" in result.stdout


def test_pipeline_without_pyspark_fails_with_a_clear_error() -> None:
    result = _kheaders("pipeline", "--bootstrap", "127.0.0.1:1", "--topic", "t", prelude=NO_PYSPARK)
    assert result.returncode == 2
    assert "kheaders pipeline needs pyspark: pip install 'kheaders[spark]'" in result.stderr


def test_pipeline_passes_arguments_to_the_job() -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
    result = _kheaders("pipeline", "--topic", "t")  # the job's parser: --bootstrap is required
    assert result.returncode == 2
    assert "--bootstrap" in result.stderr


def test_other_commands_still_reject_unknown_arguments() -> None:
    result = _kheaders("broker", "--no-such-option")
    assert result.returncode == 2
    assert "unrecognized arguments: --no-such-option" in result.stderr


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--strategy", "headr"], "headr"),
        (["--strategy", "header"], "--header"),
        (["--encoding", "varint"], "varint"),
        (["--starting-offsets", "latest"], "latest"),
        (["--ending-offsets", "{bad"], "--ending-offsets"),
        (["--topic", "bad topic"], "'bad topic'"),
        (["--output-topic", "a/b"], "--output-topic"),
        (["--master", "lokal[2]"], "lokal[2]"),
        (["--parquet", "/no/such/dir/state"], "/no/such/dir"),
        (["-o", "security.protocol=SSL"], "kafka.KEY=VALUE"),
        (["-o", "kafka.no.such.setting=1"], "no.such.setting"),
        (["-o", "kafka.auto.offset.reset=earliest"], "auto.offset.reset"),
        (["--max-traces", "-5"], "--max-traces"),
    ],
)
def test_pipeline_refuses_a_bad_argument_before_spark_starts(args: list[str], named: str) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")
    result = _kheaders("pipeline", "--bootstrap", "127.0.0.1:9", "--topic", "t", *args)
    assert result.returncode == 2, result.stderr
    assert "bad argument" in result.stderr
    assert named in result.stderr
    assert "starting Spark" not in result.stderr  # refused before the JVM was started
    assert "log4j" not in result.stderr
