"""``kheaders pipeline`` against a broker that does not answer prints the cause in one line,
as ``kheaders tail`` does: not Spark's AnalysisException around a Python traceback."""

from __future__ import annotations

from typing import Any

import pytest

from kheaders.spark._errors import python_cause
from kheaders.spark._pipeline_cli import main

WRAPPED = """[PYTHON_DATA_SOURCE_ERROR] Failed to generate Python data source read partitions: \
Traceback (most recent call last):
  File "/x/kheaders/spark/_source.py", line 114, in partitions
    reader.close()
  File "/x/kheaders/spark/_offsets.py", line 115, in _metadata
    raise unreachable from exc
kheaders.BrokerUnavailableError: Kafka at bootstrap servers '127.0.0.1:1' did not answer
 SQLSTATE: 38000"""


def test_the_cause_is_the_last_python_exception_without_spark_s_wrapping() -> None:
    assert python_cause(RuntimeError(WRAPPED)) == (
        "Kafka at bootstrap servers '127.0.0.1:1' did not answer"
    )
    other = WRAPPED.replace("kheaders.BrokerUnavailableError", "ModuleNotFoundError")
    assert python_cause(RuntimeError(other)) == (
        "ModuleNotFoundError: Kafka at bootstrap servers '127.0.0.1:1' did not answer"
    )
    assert python_cause(RuntimeError("no traceback here")) is None


@pytest.mark.integration
def test_an_unreachable_broker_prints_the_cause_alone(
    spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([
        "--bootstrap", "127.0.0.1:1", "--topic", "orders", "--master", "local[2]",
        "-o", "kafka.default.api.timeout.ms=2000",
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    (failed,) = [line for line in err.splitlines() if line.startswith("pipeline failed")]
    assert failed.startswith(
        "pipeline failed: Kafka at bootstrap servers '127.0.0.1:1' did not answer"
    ), failed
    assert "Connection refused" in failed or "transport failure" in failed
    for noise in ("Traceback", "AnalysisException", "PYTHON_DATA_SOURCE_ERROR", "SQLSTATE"):
        assert noise not in err, err
