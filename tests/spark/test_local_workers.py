"""A local master runs Spark's Python workers on this interpreter without being told
(``.venv/bin/python app.py`` with nothing activated: PATH's ``python3`` lacks kheaders),
and when an interpreter the user named lacks kheaders the error gives the local fix first."""

from __future__ import annotations

import re
import sys
import uuid
import venv
from pathlib import Path
from typing import Any

import pytest

from kheaders.spark import WorkerSetupError, _cluster, register
from tests.spark.test_docs_spark import _blocks, _localised, _seed

pytestmark = pytest.mark.integration


@pytest.fixture
def bare_python(tmp_path: Path) -> str:
    """An interpreter without confluent-kafka (a virtual environment with nothing installed),
    standing in for the ``python3`` on PATH that Spark starts by default."""
    venv.create(tmp_path / "bare", with_pip=False)
    return str(tmp_path / "bare" / "bin" / "python")


@pytest.fixture
def unprepared(spark: Any, bare_python: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The suite's session as a user's script gets it: no PYSPARK_PYTHON, the workers'
    interpreter the one Spark chose by itself, the worker check not yet run."""
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setattr(spark.sparkContext, "pythonExec", bare_python)
    monkeypatch.setattr(_cluster, "_CHECKED", set())
    return spark


def test_the_first_spark_example_runs_as_written_on_a_local_master(
    unprepared: Any, bootstrap: str, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:8]
    _seed(bootstrap, f"orders-{suffix}")
    namespace: dict[str, Any] = {"__name__": "spark_doc", "BOOTSTRAP": bootstrap}
    code = _blocks("docs/spark.md")[0]
    exec(compile(_localised(code, suffix, tmp_path), "docs/spark.md example 0", "exec"), namespace)
    assert namespace["df"].count() == 2
    assert unprepared.sparkContext.pythonExec == sys.executable


def test_a_named_interpreter_is_kept_and_the_error_gives_the_local_fix_first(
    unprepared: Any, bare_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYSPARK_PYTHON", bare_python)  # the user's choice: kept
    with pytest.raises(WorkerSetupError) as caught:
        register(unprepared)
    text = str(caught.value)
    assert unprepared.sparkContext.pythonExec == bare_python
    assert bare_python in text
    assert "No module named" in text
    local, cluster = text.index("the master is local"), text.index("on a cluster")
    assert local < cluster, text
    assert re.search(rf"this interpreter, {re.escape(sys.executable)}", text)
