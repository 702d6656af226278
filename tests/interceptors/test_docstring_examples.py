"""The examples in the interceptors' and shared helpers' docstrings run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

from tests.support.doctests import run_doctests

MODULES = [
    "kheaders.interceptors.client_id",
    "kheaders.interceptors.message_id",
    "kheaders.interceptors.correlation",
    "kheaders.interceptors.logging",
    "kheaders.interceptors._tracing_consumer",
    "kheaders.interceptors._metrics_consumer",
    "kheaders.interceptors._metrics_stats",
    "kheaders.interceptors._config",
    "kheaders._model.traceparent",
    "kheaders._model.redact",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = run_doctests(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
