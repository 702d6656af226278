"""The model, codec and client tests again, on the pure-Python core, within the one run.

The core is chosen once per process, all modules or none (``kheaders/_compiled.py``), so a
fixture cannot swap it under a client test: this test runs :data:`PURE_PASS` in a child pytest
with ``KHEADERS_NO_EXTENSIONS=1`` (on this run's broker, through ``KHEADERS_BOOTSTRAP``) and
fails with the child's failures and output. ``python -m pytest`` (the README's command, CI's)
thus runs the whole suite on the compiled core and these directories on both. Where the
compiled core is not in use (no C compiler at install, or ``KHEADERS_NO_EXTENSIONS`` set), the
whole run is already on the pure-Python core and this test skips, saying so, instead of running
it twice.

To run the pure pass alone: ``KHEADERS_NO_EXTENSIONS=1 python -m pytest tests/model ...``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kheaders
from kheaders._compiled import ENV

ROOT = Path(__file__).resolve().parents[1]

PURE_PASS = ("tests/model", "tests/codec", "tests/clients", "tests/fuzz")
"""What also runs on the pure-Python core: every module the build compiles is reached from
here, and the fuzz targets run on both cores (``tests/compat`` would add 1.3 minutes)."""

NOT_TWICE = (
    "--ignore-glob=tests/model/test_compiled_*.py",
    "--deselect=tests/model/"
    "test_security.py::test_pip_audit_finds_no_known_vulnerability_in_the_installed_environment",
)
"""What the pure pass leaves out, because running it again on the pure core learns nothing:
the ``test_compiled_*`` files already call both cores side by side in the parent run (in the
child, the module imported and its ``.py`` loaded beside it are the same Python, compared
with itself), and they hold the build tests, which do not depend on the core that runs them;
pip-audit audits the environment, not the core. The test took 132 s with them and 76 s
without, measured on two cores under a load of 11."""

CHILD_TIMEOUT = 1200


@pytest.mark.timeout(CHILD_TIMEOUT + 60)
@pytest.mark.skipif(
    not kheaders.COMPILED,
    reason="this whole run is on the pure-Python core (no compiled core built, or"
    f" {ENV} set): the pure pass is the run itself",
)
def test_the_model_codec_and_client_tests_pass_on_the_pure_python_core(bootstrap: str) -> None:
    # the child uses this run's broker (KHEADERS_BOOTSTRAP) instead of starting a second
    # Apache Kafka of its own
    env = {**os.environ, ENV: "1", "PYTHONPATH": str(ROOT), "KHEADERS_BOOTSTRAP": bootstrap}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *PURE_PASS, *NOT_TWICE, "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )
    output = done.stdout + done.stderr
    print(output)  # pytest shows it with the failure (and with -s)
    failed = re.findall(r"^(?:FAILED|ERROR) .*$", output, flags=re.MULTILINE)
    assert done.returncode == 0, (
        f"the pure-Python pass ({ENV}=1 pytest {' '.join(PURE_PASS)}) exited"
        f" {done.returncode}:\n" + "\n".join(failed or output.splitlines()[-40:])
    )
    summary = output.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary), summary
