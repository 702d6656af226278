"""The Spark form of the mirror (docs/mirror.md) on ``local-cluster``: executors in their own
JVMs read cluster A, route and stamp provenance in Spark SQL, and write cluster B; batch copies
equal Mirror's record by record; streaming over a checkpoint copies each record once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mirror.conftest import CLUSTER_B

pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")

pytestmark = [pytest.mark.spark, pytest.mark.integration]
ROOT = Path(__file__).resolve().parents[2]
JOB = Path(__file__).with_name("spark_job.py")


@pytest.mark.timeout(600)  # three JVMs on a loaded 2-core machine
def test_the_spark_form_copies_as_the_mirror_does_on_local_cluster(
    bootstrap: str, cluster_b: str, tmp_path: Path
) -> None:
    if not (
        os.environ.get("JAVA_HOME")
        or any((Path(p) / "java").exists() for p in os.environ.get("PATH", "").split(os.pathsep))
    ):
        pytest.skip("no JVM: set JAVA_HOME or put java on PATH to run the Spark tests")
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
    done = subprocess.run(
        [sys.executable, str(JOB), bootstrap, cluster_b, str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(lines[-1][len("RESULT ") :])
    print(f"local-cluster mirror phases (s since start): {found['laps']}")
    assert found["executor_jvms"] == 2
    # 11 records: 1 dropped (kind=test), 1 looped (visited B), 1 refused, urgent fans out to 2
    assert found["batch_copies"] == 9
    assert found["batch_equal"] is True
    assert found["dead"] == found["refused"] == ["v-k11"]
    assert "not a cluster id" in found["dead_reason"]
    # streaming: 8 records over two runs, k4 dropped, k5 fanned out: each copy once
    assert found["streamed"] == ["k1", "k2", "k3", "k5", "k5", "k6", "k7", "k8"]
    assert found["streamed_hops"] == [f"{found['a_id']},{CLUSTER_B}"]
