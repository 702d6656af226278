"""docs/interceptors.md, metrics section: its example runs, and it lists every instrument."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kheaders import _telemetry
from kheaders.broker import BOOTSTRAP_ENV
from kheaders.interceptors import _metrics_common, _metrics_stats

DOC = Path(__file__).resolve().parents[2] / "docs" / "interceptors.md"


def _section() -> str:
    text = DOC.read_text()
    start = text.index("## Metrics (`kheaders.interceptors.metrics`)")
    return text[start : text.index("\n## ", start + 1)]


@pytest.mark.integration
def test_metrics_example_runs(monkeypatch: pytest.MonkeyPatch, bootstrap: str) -> None:
    monkeypatch.setenv(BOOTSTRAP_ENV, bootstrap)
    code = re.findall(r"```python\n(.*?)```", _section(), re.S)[0]
    exec(compile(code, str(DOC), "exec"), {"__name__": "metrics_doc"})


def test_the_example_sends_more_than_the_latency_budget_and_says_what_is_sampled() -> None:
    """500 records give 500 counted sends and (within a second) 100 latencies: the example
    and its text must say so, not "one delivery latency per record"."""
    section = _section()
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    (count,) = {int(n) for n in re.findall(r"for i in range\((\d+)\)", code)}
    assert count > _metrics_common.DEFAULT_MAX_RATE
    assert f"== {count}  # every record counted" in code
    assert f"at most {_metrics_common.DEFAULT_MAX_RATE} a second per client" in code
    assert "one delivery latency per record" not in section
    text = " ".join(section.split())
    assert f"{count} counted sends and {_metrics_common.DEFAULT_MAX_RATE} latencies" in text


def test_every_instrument_is_listed_with_its_unit() -> None:
    section = _section()
    names = {
        _metrics_common.SENT_MESSAGES: "{message}",
        _metrics_common.CONSUMED_MESSAGES: "{message}",
        _metrics_common.OPERATION_DURATION: "s",
        _metrics_common.PROCESS_DURATION: "s",
        _metrics_stats.QUEUE_MESSAGES: "{message}",
        _metrics_stats.QUEUE_BYTES: "By",
        _metrics_stats.CONSUMER_LAG: "{message}",
        _metrics_stats.CONSUMER_LAG_STORED: "{message}",
        _metrics_stats.BROKER_RTT: "s",
        _metrics_stats.BROKER_RTT_P99: "s",
    }
    names.update({name: unit for name, (unit, _) in _telemetry._SPECS.items()})
    for name, unit in names.items():
        row = next((line for line in section.splitlines() if f"| `{name}` |" in line), None)
        assert row is not None, name
        assert f"| `{unit}` |" in row, (name, unit)
