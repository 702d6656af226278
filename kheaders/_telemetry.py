"""kheaders' own counters: what the library did on its failure paths, as OpenTelemetry metrics.

Counters (attributes in brackets):

- ``kheaders.interceptor.failures`` ``{failure}`` [``kheaders.interceptor``, ``kheaders.hook``]
- ``kheaders.producer.records.refused`` ``{record}`` [``kheaders.header.limit``: the
  HeaderLimits field, e.g. ``max_value_bytes``]
- ``kheaders.consumer.deserialization.failures`` ``{record}`` [``messaging.destination.name``,
  ``kheaders.field``: key, value or headers]
- ``kheaders.deadletter.published`` ``{record}`` [``messaging.destination.name``: the
  dead-letter topic]

The meter (``kheaders``) comes from the global MeterProvider, created on the first count, and
each counter once. Every call site is a failure path: a successful produce or consume never
gets here. With no MeterProvider configured the API's proxy drops the counts (its no-op
path); ``opentelemetry.metrics`` is imported only when something is first counted.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.metrics import Counter, MeterProvider

INTERCEPTOR_FAILURES = "kheaders.interceptor.failures"
RECORDS_REFUSED = "kheaders.producer.records.refused"
DESERIALIZATION_FAILURES = "kheaders.consumer.deserialization.failures"
DEAD_LETTERS = "kheaders.deadletter.published"

_SPECS: dict[str, tuple[str, str]] = {
    INTERCEPTOR_FAILURES: ("{failure}", "Interceptor hooks that raised or returned a bad result."),
    RECORDS_REFUSED: ("{record}", "Records refused before librdkafka saw them: a header limit."),
    DESERIALIZATION_FAILURES: ("{record}", "Consumed records whose key, value or headers failed."),
    DEAD_LETTERS: ("{record}", "Failed records republished to a dead-letter topic."),
}


class _State:
    """The provider kheaders counts into and its counters, created on the first count."""

    lock = threading.Lock()
    provider: MeterProvider | None = None
    counters: dict[str, Counter] | None = None


def use_meter_provider(provider: MeterProvider | None) -> None:
    """Count into ``provider`` from now on (``None``: the global one, the default).

    For applications that keep a MeterProvider of their own rather than a global one, and for
    tests (the global provider can be set only once per process).
    """
    with _State.lock:
        _State.provider = provider
        _State.counters = None


def _get(name: str) -> Counter:
    counters = _State.counters
    if counters is None:
        with _State.lock:
            counters = _State.counters
            if counters is None:
                from opentelemetry import metrics

                meter = metrics.get_meter("kheaders", meter_provider=_State.provider)
                counters = {
                    n: meter.create_counter(n, unit=u, description=d)
                    for n, (u, d) in _SPECS.items()
                }
                _State.counters = counters
    return counters[name]


def count(name: str, attributes: dict[str, str]) -> None:
    """Add one to kheaders' counter ``name``; never raises (telemetry must not break a client)."""
    try:
        _get(name).add(1, attributes)
    except Exception:  # a misbehaving SDK or exporter: the client's own error matters more
        return


def interceptor_failed(interceptor: str, hook: str) -> None:
    """Count an interceptor hook failure (``hook``: on_send, on_acknowledgement, ...)."""
    count(INTERCEPTOR_FAILURES, {"kheaders.interceptor": interceptor, "kheaders.hook": hook})


def record_refused(limit: str) -> None:
    """Count a record refused by the header limit ``limit`` (a HeaderLimits field name)."""
    count(RECORDS_REFUSED, {"kheaders.header.limit": limit})


def deserialization_failed(topic: str | None, field: str) -> None:
    """Count a consumed record whose ``field`` (key, value or headers) failed to decode."""
    count(
        DESERIALIZATION_FAILURES,
        {"messaging.destination.name": topic or "", "kheaders.field": field},
    )


def dead_letter_published(topic: str) -> None:
    """Count a record republished to the dead-letter topic ``topic``."""
    count(DEAD_LETTERS, {"messaging.destination.name": topic})
