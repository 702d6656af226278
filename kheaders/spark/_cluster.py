"""Fail early, and clearly, when Spark's Python workers cannot import kheaders.

On a cluster the executors (and the driver-side Python planning worker) start the
interpreter named by ``spark.pyspark.python`` (else ``python3`` from ``PATH``); without
kheaders, confluent-kafka and pyarrow there, the first read or write fails deep inside a task
with ``No module named 'kheaders'``. :func:`check_workers` runs one tiny task that imports
them and raises :class:`WorkerSetupError` saying what to configure (docs/spark-cluster.md).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from kheaders.spark._errors import WorkerSetupError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_CHECKED: set[str] = set()
_HELP = (
    "ship kheaders to the executors: a packed virtual environment with --archives "
    "(spark.archives) and spark.pyspark.python pointing into it, or --py-files for the "
    "pure-Python part with confluent-kafka and pyarrow installed on every node "
    "(docs/spark-cluster.md)"
)


def _probe(_: object) -> str:
    """Runs in a Python worker: import what the data source needs; report the interpreter."""
    import confluent_kafka  # noqa: F401
    import pyarrow  # noqa: F401

    import kheaders.spark._reader  # noqa: F401

    return sys.executable


def check_workers(spark: SparkSession) -> None:
    """Run one task that imports kheaders, confluent-kafka and pyarrow in a Python worker.

    Once per Spark application (later calls return at once); skipped under Spark Connect,
    where the client cannot run RDD jobs. Raises WorkerSetupError naming the worker's
    interpreter setting and the failing import.
    """
    try:
        sc = spark.sparkContext
    except Exception:  # Spark Connect has no SparkContext
        return
    app = sc.applicationId
    if app in _CHECKED:
        return
    try:
        sc.parallelize([0], 1).map(_probe).collect()
    except Exception as exc:
        text = str(exc)
        missing = next(
            (line.strip() for line in text.splitlines() if "No module named" in line),
            text.splitlines()[0] if text else type(exc).__name__,
        )
        python = getattr(sc, "pythonExec", None) or "python3 from PATH"
        raise WorkerSetupError(
            f"Spark's Python workers (interpreter: {python}, from spark.pyspark.python or "
            f"PYSPARK_PYTHON) cannot import kheaders and its "
            f"dependencies ({missing}); {_HELP}"
        ) from exc
    _CHECKED.add(app)
