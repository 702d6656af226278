"""docs/spark-cluster.md: its Python example runs, its zip command builds the zip it names, and
the job arguments of its spark-submit lines pass the pipeline's argument check (docs/spark.md
and docs/spark-sql.md run in tests/spark/test_docs_spark.py)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from kheaders.spark._pipeline_cli import check_args, parser
from tests.spark.kafka_helpers import consume_all, produce

pytestmark = pytest.mark.spark
DOCS = Path(__file__).resolve().parents[2] / "docs"
TP = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def blocks(page: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", (DOCS / page).read_text(), flags=re.S)


def _orders(bootstrap: str, topic_factory: Callable[..., str]) -> tuple[str, str]:
    orders, copy = topic_factory(partitions=2), topic_factory(partitions=2)
    records = [(i % 2, f"k{i}".encode(), f"v{i}".encode(), [("traceparent", TP)]) for i in range(6)]
    produce(bootstrap, orders, records)  # type: ignore[arg-type]
    return orders, copy


def _localise(code: str, bootstrap: str, orders: str, copy: str) -> str:
    code = code.replace("127.0.0.1:9092", bootstrap)
    return code.replace('"orders-copy"', f'"{copy}"').replace('"orders"', f'"{orders}"')


def test_spark_cluster_md_application_example(
    spark: SparkSession, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    orders, copy = _orders(bootstrap, topic_factory)
    [code] = blocks("spark-cluster.md", "python")
    kept = [
        line
        for line in code.splitlines()
        if "spark.archives" not in line and "spark.pyspark.python" not in line
    ]
    namespace: dict[str, object] = {"MASTER": "local[2]", "BOOTSTRAP": bootstrap}
    exec(_localise("\n".join(kept), bootstrap, orders, copy), namespace)
    assert len(consume_all(bootstrap, copy, 2, expected=6)) == 6


def test_spark_cluster_md_zip_command_and_job_arguments(tmp_path: Path) -> None:
    commands = [c for block in blocks("spark-cluster.md", "sh") for c in block.split("\n")]
    [make_zip] = [c for c in commands if "make_archive" in c]
    code = shlex.split(make_zip)[2]
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True)
    names = zipfile.ZipFile(tmp_path / "kheaders.zip").namelist()
    assert "kheaders/__init__.py" in names
    assert "kheaders/spark/pipeline.py" in names
    for block in blocks("spark-cluster.md", "sh"):
        if "spark-submit" not in block:
            continue
        words = shlex.split(block.replace("\\\n", " ").replace('"$KAFKA_PASSWORD"', "secret"))
        job = next(
            i for i, w in enumerate(words) if w.endswith("pipeline.py") or "pipeline as p" in w
        )
        args = check_args(parser().parse_args(words[job + 1 :]))
        assert args.master == "spark://spark-master:7077"
        assert args.bootstrap == "kafka-1:9092"
