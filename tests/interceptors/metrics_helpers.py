"""Reading an SDK InMemoryMetricReader in the metrics tests: points by instrument name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics.export import InMemoryMetricReader, Metric


@dataclass
class Points:
    """Every data point of one instrument in one collection, with the instrument's unit."""

    name: str
    unit: str
    points: list[tuple[dict[str, Any], Any]]

    def value(self, **attrs: Any) -> Any:
        """The one point whose attributes include ``attrs`` (dots as ``__``): its value/point."""
        want = {k.replace("__", "."): v for k, v in attrs.items()}
        found = [p for a, p in self.points if all(a.get(k) == v for k, v in want.items())]
        assert len(found) == 1, (want, self.points)
        return found[0]

    def attributes(self) -> list[dict[str, Any]]:
        return [a for a, _ in self.points]


def collect(reader: InMemoryMetricReader) -> dict[str, Points]:
    """Collect now; instrument name -> Points (a histogram point's value is the point)."""
    data = reader.get_metrics_data()
    out: dict[str, Points] = {}
    if data is None:
        return out
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                out[metric.name] = _points(metric)
    return out


def _points(metric: Metric) -> Points:
    pts: list[tuple[dict[str, Any], Any]] = []
    for dp in metric.data.data_points:
        attrs = dict(dp.attributes or {})
        pts.append((attrs, getattr(dp, "value", dp)))
    return Points(metric.name, metric.unit or "", pts)


def wait_for(predicate: Callable[[], bool], poll: Callable[[], object], timeout: float) -> None:
    """Call ``poll`` until ``predicate()`` holds; fail after ``timeout`` seconds."""
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        poll()
