"""The Distributed Tracing extension: ``traceparent``/``tracestate`` attributes and the
record's own trace headers.

The extension carries the trace the event started in; the record's ``traceparent`` and
``tracestate`` headers carry the current hop (what kheaders' tracing interceptors read and
write). On a single hop they are the same, so each side fills the other where it is
missing and never overwrites: writing, an event without the extension takes it from the
record's headers (the tracing interceptor ran before the serializer), and a record without
trace headers takes them from the event; reading, an event without the extension takes it
from the record's headers. A value that is not a valid W3C ``traceparent`` is not copied.
"""

from __future__ import annotations

from kheaders._model.headers import Headers
from kheaders._model.traceparent import parse_traceparent, parse_tracestate
from kheaders.cloudevents._attributes import AttributeValue
from kheaders.cloudevents._event import Event

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"


def _valid_state(value: str | bytes | None) -> bool:
    return value is not None and bool(parse_tracestate(value))


def event_from_headers(event: Event, headers: Headers) -> Event:
    """``event`` with the extension taken from the record's trace headers when it has none.

    The event is returned unchanged when it has a ``traceparent`` or the record has no
    valid one.
    """
    if TRACEPARENT in event.attributes:
        return event
    parent = headers.last_value(TRACEPARENT)
    if parent is None or parse_traceparent(parent) is None:
        return event
    added: dict[str, AttributeValue] = {TRACEPARENT: parent.decode("ascii").strip()}
    state = headers.last_value(TRACESTATE)
    if state is not None and TRACESTATE not in event.attributes and _valid_state(state):
        added[TRACESTATE] = state.decode("utf-8", "replace").strip()
    return Event._trusted({**event.attributes, **added}, event.data)  # both parsed valid


def headers_from_event(event: Event, headers: Headers) -> None:
    """Give the record ``traceparent``/``tracestate`` headers from the event's extension
    when the record has no ``traceparent`` header (and the event's value is valid)."""
    parent = event.get(TRACEPARENT)
    if not isinstance(parent, str) or TRACEPARENT in headers:
        return
    if parse_traceparent(parent) is None:
        return
    headers.set(TRACEPARENT, parent.encode("ascii"))
    state = event.get(TRACESTATE)
    if isinstance(state, str) and _valid_state(state):
        headers.set(TRACESTATE, state.encode("utf-8"))
