"""Making Spark's Python workers run the interpreter that runs the driver, in local mode."""

from __future__ import annotations

import os
import sys


def use_driver_python_for_local_workers(master: str) -> None:
    """In ``local`` mode, point ``PYSPARK_PYTHON`` at this interpreter unless the user set it.

    Spark starts its Python workers with ``python3`` from ``PATH``, which is not the virtual
    environment a console script (``.venv/bin/kheaders``) runs in when nothing activated it;
    the workers then cannot import confluent-kafka or kheaders. On a cluster the executors'
    interpreter is the cluster's business, so nothing changes there.
    """
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
