"""OpenTelemetry's confluent-kafka instrumentation beneath a producer: one ``traceparent``.

``ConfluentKafkaInstrumentor().instrument()`` (what ``opentelemetry-instrument`` runs at
start-up) swaps ``confluent_kafka.Producer`` for its ``AutoInstrumentedProducer``, whose
``produce`` starts a send span and appends its ``traceparent`` to the headers it is given;
``instrument_producer(p)`` returns a ``ProxiedProducer`` that does the same. A kheaders
Producer built on such a client (instrumented before the Producer was built, or wrapped after
it was) has the instrumentation beneath it: set up first, it injects. So the trace context
that the Producer's interceptors wrote (kheaders' TracingProducerInterceptor) is left out of
what the instrumentation is handed, else each record would carry two ``traceparent`` headers
and W3C consumers would restart the trace. A ``traceparent`` the caller passed is the
caller's own and is kept, as plain confluent-kafka under the instrumentation keeps it.

A producer built before ``instrument()`` never has it beneath (the swap reaches only clients
built after it): its interceptors inject, alone.
"""

from __future__ import annotations

from kheaders._log import get_logger
from kheaders._model.headers import Headers

_log = get_logger("kheaders.producer")

INSTRUMENTATION = "opentelemetry-instrumentation-confluent-kafka"
_MODULE = "opentelemetry.instrumentation.confluent_kafka"
TRACE_FIELDS = ("traceparent", "tracestate")
"""The W3C trace context fields the instrumentation writes (its span's context)."""

_said = False
"""Whether the one log line saying which side injects was written (once per process)."""


def instrumented(client: object) -> bool:
    """True when ``client``'s class comes from OpenTelemetry's instrumentation (so its
    ``produce`` injects, or did while instrumented): checked once, when a Producer is built."""
    return any(k.__module__ == _MODULE for k in type(client).__mro__)


def injecting(client: object) -> bool:
    """True while ``client``'s ``produce`` injects a ``traceparent``: a ``ProxiedProducer``
    always, an ``AutoInstrumentedProducer`` until ``uninstrument()`` unwraps it."""
    for klass in type(client).__mro__:
        if klass.__module__ == _MODULE:
            if klass.__name__ == "AutoInstrumentedProducer":
                return hasattr(klass.__dict__.get("produce"), "__wrapped__")
            return True
    return False


def passed(headers: Headers) -> tuple[str, ...]:
    """The trace context fields among the headers the caller passed (before interceptors)."""
    return tuple(f for f in TRACE_FIELDS if f in headers)


def leave_to_instrumentation(client: object, headers: Headers, kept: tuple[str, ...]) -> None:
    """Remove the trace context fields interceptors added to ``headers`` (those not in
    ``kept``, the caller's own) while ``client``'s instrumentation injects; say so once."""
    if not injecting(client):
        return
    added = [f for f in TRACE_FIELDS if f not in kept and f in headers]
    if not added:
        return
    for field in added:
        headers.remove(field)
    global _said  # noqa: PLW0603 - one line per process, not per record
    if not _said:
        _said = True
        _log.info(
            "trace context injected by the OpenTelemetry instrumentation beneath this producer"
            " (set up first); the trace headers kheaders' interceptors wrote are left out",
            injects=INSTRUMENTATION,
            left_out=added,
            client=type(client).__qualname__,
        )
