"""Fail early, and clearly, when Spark's Python workers cannot import kheaders.

On a cluster the executors (and the driver-side Python planning worker) start the
interpreter named by ``spark.pyspark.python`` (else ``python3`` from ``PATH``); without
kheaders, confluent-kafka and pyarrow there, the first read or write fails deep inside a task
with ``No module named 'kheaders'``. :func:`check_workers` runs one tiny task that imports
them and raises :class:`WorkerSetupError` saying what to configure (docs/spark-cluster.md).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

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


_LOCAL_HELP = (
    "the master is local, so the workers run on this machine: unset PYSPARK_PYTHON and "
    "spark.pyspark.python (kheaders then runs them on this interpreter, {python}), or point "
    "them at an interpreter that has kheaders"
)


def _probe(_: object) -> str:
    """Runs in a Python worker: import what the data source needs; report the interpreter."""
    import confluent_kafka  # noqa: F401
    import pyarrow  # noqa: F401

    import kheaders.spark._reader  # noqa: F401

    return sys.executable


def _local(sc: Any) -> bool:
    return str(getattr(sc, "master", "")).startswith("local")


def use_this_interpreter_locally(spark: SparkSession) -> None:
    """With a ``local`` master, run Spark's Python workers on this interpreter unless the user
    named one (``PYSPARK_PYTHON``, ``spark.pyspark.python``).

    Spark starts them with ``python3`` from ``PATH`` otherwise, which is not the virtual
    environment a script runs in when nothing activated it (``.venv/bin/python app.py``).
    Python functions and data sources registered from now on carry the interpreter, so this
    runs before them; :func:`prepare_local_spark` does the same before a session exists.
    """
    try:
        sc = spark.sparkContext
    except Exception:  # Spark Connect: the server's business
        return
    if not _local(sc) or os.environ.get("PYSPARK_PYTHON"):
        return
    if sc.getConf().get("spark.pyspark.python"):
        return
    sc.pythonExec = sys.executable


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
        advice = (
            f"{_LOCAL_HELP.format(python=sys.executable)}; on a cluster, {_HELP}"
            if _local(sc)
            else _HELP
        )
        raise WorkerSetupError(
            f"Spark's Python workers (interpreter: {python}, from spark.pyspark.python or "
            f"PYSPARK_PYTHON) cannot import kheaders and its "
            f"dependencies ({missing}); {advice}"
        ) from exc
    _CHECKED.add(app)
