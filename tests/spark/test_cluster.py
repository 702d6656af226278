"""The data source with executors in their own JVMs (``local-cluster``), and the worker check.

tests/spark/cluster_job.py runs in its own process (one SparkContext per process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]
JOB = Path(__file__).with_name("cluster_job.py")


def _job(bootstrap: str, work: Path) -> dict[str, object]:
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
    done = subprocess.run(
        [sys.executable, str(JOB), bootstrap, str(work)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0, done.stderr[-3000:]
    assert lines, done.stdout[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])  # type: ignore[no-any-return]


def _lacks_confluent_kafka(python: str) -> bool:
    if not Path(python).exists():
        return False
    probe = [python, "-c", "import confluent_kafka"]
    return subprocess.run(probe, capture_output=True, check=False).returncode != 0


@pytest.mark.timeout(600)  # three JVMs on a loaded 2-core machine; about 1-2 min when quiet
def test_read_write_compact_and_stream_restart_with_executors_in_their_own_jvms(
    bootstrap: str, tmp_path: Path
) -> None:
    found = _job(bootstrap, tmp_path)
    print(f"local-cluster phases (s since start): {found['seconds']}")
    assert found["executor_jvms"] == 2
    assert (found["read"], found["read_distinct"], found["read_exact"]) == (200, 200, True)
    assert found["read_tasks"] == 4  # 100 offsets per partition, maxRecordsPerPartition=60
    assert (found["written"], found["written_distinct"]) == (200, 200)
    assert found["written_headers_ok"] is True
    assert found["compact_ok"] is True
    assert found["compact_varlong_ok"] is True
    # the restart reads only the new records: each record exactly once over both runs
    assert found["streamed"] == [200, 100, 300]
    if _lacks_confluent_kafka("/usr/bin/python3"):
        message = str(found["refused"])
        assert "/usr/bin/python3" in message
        assert "No module named" in message
        assert "spark.pyspark.python" in message
        assert "docs/spark-cluster.md" in message
