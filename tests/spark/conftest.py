"""Spark fixtures shared by the tests under tests/spark: one local SparkSession per run."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (the spark extra)")

from pyspark.sql import SparkSession  # noqa: E402

from kheaders.spark import prepare_local_spark  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _java_available() -> bool:
    return bool(os.environ.get("JAVA_HOME")) or shutil.which("java") is not None


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """A quiet local[2] SparkSession (no UI, 2 shuffle partitions) shared by all Spark tests."""
    if not _java_available():
        pytest.skip("no JVM: set JAVA_HOME or put java on PATH to run the Spark tests")
    # Spark's Python workers import kheaders (data sources, UDFs) from this checkout.
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    # ... and they must run this interpreter (the venv), not whatever python3 is on PATH.
    prepare_local_spark("local[2]")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kheaders-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .config("spark.python.worker.reuse", "true")
        .config("spark.sql.streaming.stopActiveRunOnRestart", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/spark carries the ``spark`` marker."""
    for item in items:
        if "/tests/spark/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.spark)
