"""opentelemetry-instrumentation-confluent-kafka's own tests pass with kheaders' clients.

The sdist is downloaded at test time (never committed), its tests extracted, and run in a
separate pytest process with ``otel_substitute.py`` as their conftest: ``confluent_kafka.Producer``
and ``Consumer`` are kheaders' classes for the whole run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

PACKAGE = "opentelemetry-instrumentation-confluent-kafka"
VERSION = "0.66b1"
ROOT = Path(__file__).resolve().parents[2]
PLUGIN = Path(__file__).with_name("otel_substitute.py")


def _download(into: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
    command += ["--no-build-isolation", "-q", f"{PACKAGE}=={VERSION}", "-d", str(into)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        if re.search(
            r"No matching distribution|Could not find|connection|resolve|timed out",
            done.stderr,
            re.I,
        ):
            pytest.skip(f"the package index is unreachable from here: {done.stderr.strip()[-200:]}")
        raise AssertionError(done.stderr)
    (sdist,) = into.glob("*.tar.gz")
    return sdist


def test_instrumentation_tests_pass_with_kheaders_clients(tmp_path: Path) -> None:
    sdist = _download(tmp_path / "download")
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if "/tests/" in m.name and m.isfile()]
        archive.extractall(tmp_path / "sdist", members=members, filter="data")
    (tests,) = (tmp_path / "sdist").glob("*/tests")
    run = tests.parent
    shutil.copy(PLUGIN, run / "conftest.py")
    (run / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=short", "tests"],
        cwd=run,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = done.stdout + done.stderr
    assert "substituted by kheaders" in output
    defined = len(
        re.findall(r"^    def test_", (tests / "test_instrumentation.py").read_text(), re.M)
    )
    assert defined >= 15
    assert re.search(rf"\b{defined} passed\b", output), output[-3000:]
    assert done.returncode == 0, output[-3000:]
