"""Local-mode Spark set up for this process: its interpreter for workers, loopback only."""

from __future__ import annotations

import os
import sys


def prepare_local_spark(master: str) -> None:
    """In ``local`` mode, point ``PYSPARK_PYTHON`` at this interpreter and bind Spark to loopback.

    Both only where the user did not set them (``PYSPARK_PYTHON``, ``SPARK_LOCAL_IP``).

    Spark starts its Python workers with ``python3`` from ``PATH``, which is not the virtual
    environment a console script (``.venv/bin/kheaders``) runs in when nothing activated it;
    the workers then cannot import confluent-kafka or kheaders. On a cluster the executors'
    interpreter is the cluster's business, so nothing changes there. Spark would otherwise bind
    its local driver to the first non-loopback interface when the hostname resolves to
    loopback; a local run has no business listening there.
    """
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
