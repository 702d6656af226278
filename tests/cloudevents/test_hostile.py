"""Whatever bytes and headers arrive, reading gives an event or a CloudEventError: never
another exception (a crash), and never an event that breaks the spec."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kheaders import CloudEventError, Headers
from kheaders.cloudevents import MEDIA_TYPE, CloudEventDeserializer, CloudEventSerializer, Event

_NAMES = [
    "specversion",
    "id",
    "source",
    "type",
    "time",
    "subject",
    "dataschema",
    "x",
    "traceparent",
]
_keys = st.one_of(
    st.sampled_from([f"ce_{n}" for n in _NAMES] + ["content-type", "CE_ID", "traceparent"]),
    st.text(min_size=1, max_size=12).filter(lambda k: "\x00" not in k).map(lambda k: "ce_" + k),
)
_text_values = st.sampled_from(
    [
        b"1.0",
        b"0.3",
        b"/s",
        b"2018-04-05T03:56:24Z",
        b"application/json",
        MEDIA_TYPE.encode(),
        b"text/plain",
        b"",
        b"\xff\xfe",
        b"%zz",
        b"a b",
    ]
)
_values = st.one_of(st.none(), _text_values, st.binary(max_size=40))
_headers = st.lists(st.tuples(_keys, _values), max_size=10)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_documents = st.dictionaries(
    st.sampled_from([*_NAMES, "data", "data_base64", "Bad", ""]), _json, max_size=8
)
_reader = CloudEventDeserializer()


def _read(headers: list[tuple[str, Any]], value: bytes | None) -> Event | None:
    try:
        h = Headers(headers)
    except ValueError:
        return None  # not even headers (the client refuses these before us)
    try:
        event = _reader.deserialize("t", h.close(), value)
    except CloudEventError:
        return None
    assert isinstance(event, Event)
    return event


@given(_headers, st.one_of(st.none(), st.binary(max_size=60)))
def test_any_headers_and_value_read_as_an_event_or_a_cloud_event_error(
    headers: list[tuple[str, Any]], value: bytes | None
) -> None:
    event = _read(headers, value)
    if event is not None:  # what was accepted writes again, unchanged
        h = Headers()
        out = CloudEventSerializer().serialize("t", h, event)
        again = _read(list(h), out)
        assert again is not None
        assert again.attributes == event.attributes


@given(_documents, st.booleans())
def test_any_json_document_reads_as_an_event_or_a_cloud_event_error(
    document: dict[str, Any], keep_required: bool
) -> None:
    if keep_required:
        document = {"specversion": "1.0", "id": "1", "source": "/s", "type": "t", **document}
    raw = json.dumps(document).encode()
    event = _read([("content-type", MEDIA_TYPE.encode())], raw)
    if event is not None:
        h = Headers()
        out = CloudEventSerializer("structured").serialize("t", h, event)
        assert _read(list(h), out) == event
