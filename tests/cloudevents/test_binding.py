"""The Kafka protocol binding's rules, each tested where it bites (no broker needed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from kheaders import (
    CloudEventError,
    Headers,
    JsonDeserializer,
    KHeadersError,
    StringDeserializer,
    StringSerializer,
)
from kheaders.cloudevents import (
    MEDIA_TYPE,
    CloudEventDeserializer,
    CloudEventSerializer,
    Event,
    StructuredCloudEventSerializer,
    partition_key,
)

BASE = {"specversion": "1.0", "id": "A234-1234-1234", "source": "/mycontext", "type": "demo"}
TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
TP2 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def write(
    event: Any, mode: str = "binary", headers: Headers | None = None, **kw: Any
) -> tuple[Headers, bytes | None]:
    h = headers if headers is not None else Headers()
    value = CloudEventSerializer(mode, **kw).serialize("t", h, event)  # type: ignore[arg-type]
    return h, value


def read(headers: Headers | list[tuple[str, Any]], value: bytes | None, **kw: Any) -> Any:
    h = headers if isinstance(headers, Headers) else Headers(headers)
    return CloudEventDeserializer(**kw).deserialize("t", h.close(), value)


def ce(**attributes: str) -> list[tuple[str, bytes]]:
    return [(f"ce_{k}", v.encode()) for k, v in {**BASE, **attributes}.items()]


# --- binary mode -----------------------------------------------------------------------


def test_binary_writes_each_attribute_as_a_ce_header_and_datacontenttype_as_content_type() -> None:
    h, value = write(
        {**BASE, "datacontenttype": "application/json", "subject": "é", "data": {"a": 1}}
    )
    assert value == b'{"a":1}'
    assert h.to_dict() == {
        "ce_specversion": b"1.0",
        "ce_id": b"A234-1234-1234",
        "ce_source": b"/mycontext",
        "ce_type": b"demo",
        "content-type": b"application/json",
        "ce_subject": "é".encode(),
    }
    assert "ce_datacontenttype" not in h


def test_binary_round_trip_keeps_extensions_and_time() -> None:
    event = Event(
        {**BASE, "time": "2018-04-05T03:56:24Z", "comexampleext": "x", "n": 3}, b"\x00raw"
    )
    h, value = write(event)
    assert h.last_value("ce_time") == b"2018-04-05T03:56:24Z"
    back = read(h, value)
    assert back.data == b"\x00raw"
    assert back.time == datetime(2018, 4, 5, 3, 56, 24, tzinfo=UTC)
    assert back.extensions == {"comexampleext": "x", "n": "3"}  # binary mode: values as text


def test_a_data_less_event_is_a_null_value_a_tombstone() -> None:
    h, value = write(dict(BASE))
    assert value is None
    assert read(h, value) == Event(BASE)
    # structured mode always has a value (the attributes): never a tombstone
    h, value = write(dict(BASE), "structured")
    assert value is not None
    assert read(h, value) == Event(BASE)


def test_an_empty_value_reads_as_no_data_as_the_sdk_writes_it() -> None:
    assert read(ce(), b"").data is None


def test_reading_picks_the_mode_by_content_type_not_by_ce_headers() -> None:
    h, value = write({**BASE, "data": [1]}, "structured")
    assert h.to_dict() == {"content-type": MEDIA_TYPE.encode()}
    # ce_ headers beside a structured record do not make it binary (the value wins)
    h2 = Headers(
        [*ce(id="other"), ("content-type", b"Application/CloudEvents+JSON; charset=UTF-8")]
    )
    event = read(h2, value)
    assert (event.id, event.data) == ("A234-1234-1234", [1])
    # binary record with a content-type that is not a CloudEvents media type
    assert read([*ce(), ("content-type", b"text/plain")], b"hi").data == "hi"


def test_an_event_format_other_than_json_is_refused_by_name() -> None:
    with pytest.raises(CloudEventError, match="cloudevents\\+avro"):
        read([("content-type", b"application/cloudevents+avro")], b"\x00")


def test_the_record_key_is_not_touched_and_partitionkey_is_opt_in() -> None:
    event = {**BASE, "partitionkey": "order-7"}
    h, _ = write(event)
    assert h.last_value("ce_partitionkey") == b"order-7"  # the attribute still travels
    assert partition_key(event) == "order-7"
    assert partition_key(BASE) is None


def test_writing_over_a_record_that_carried_an_event_leaves_no_duplicates() -> None:
    h = Headers([*ce(id="old", extra="1"), ("content-type", b"text/plain"), ("keep", b"k")])
    h, value = write({**BASE, "data": b"x"}, headers=h)
    assert h.keys().count("ce_id") == 1
    assert "ce_extra" not in h
    assert h.last_value("keep") == b"k"
    assert read(h, value).id == BASE["id"]


def test_data_serializer_and_deserializer_are_used_for_the_data() -> None:
    h, value = write(
        {**BASE, "datacontenttype": "text/plain", "data": "héllo"},
        data_serializer=StringSerializer("latin-1"),
    )
    assert value == "héllo".encode("latin-1")
    assert h.last_value("content-type") == b"text/plain"  # the event's type, not the serializer's
    assert read(h, value, data_deserializer=StringDeserializer("latin-1")).data == "héllo"
    with pytest.raises(CloudEventError, match="does not decode") as info:
        read(h, value)  # text/* without a data deserializer is read as UTF-8
    assert info.value.attribute == "data"
    _, structured = write({**BASE, "data": {"a": 1}}, "structured")
    assert read(
        [("content-type", MEDIA_TYPE.encode())], structured, data_deserializer=JsonDeserializer()
    ).data == {"a": 1}


def test_event_factory_builds_the_applications_event() -> None:
    h, value = write({**BASE, "data": {"a": 1}})
    made = read(h, value, event_factory=lambda attrs, data: (attrs["id"], data))
    assert made == ("A234-1234-1234", {"a": 1})


# --- structured mode -------------------------------------------------------------------


def test_structured_writes_json_data_inline_and_bytes_as_data_base64() -> None:
    h, value = write({**BASE, "data": {"a": [1, 2]}}, "structured")
    assert b'"data":{"a":[1,2]}' in value  # type: ignore[operator]
    h, value = write({**BASE, "data": b"\xff\x00"}, "structured")
    assert b'"data_base64":"/wA="' in value  # type: ignore[operator]
    assert read(h, value).data == b"\xff\x00"
    assert StructuredCloudEventSerializer().mode == "structured"


@pytest.mark.parametrize(
    ("document", "attribute"),
    [
        (b'{"specversion":"1.0","id":"1","source":"/s"}', "type"),
        (b'{"specversion":"0.3","id":"1","source":"/s","type":"t"}', "specversion"),
        (b'{"specversion":"1.0","id":"1","source":"/s","type":"t","n":1.5}', "n"),
        (b'{"specversion":"1.0","id":"1","source":"/s","type":"t","n":{"a":1}}', "n"),
        (b'{"specversion":"1.0","id":1,"source":"/s","type":"t"}', "id"),
        (b'{"specversion":"1.0","id":"1","source":"/s","type":"t","n":4294967296}', "n"),
        (
            b'{"specversion":"1.0","id":"1","source":"/s","type":"t","data":1,"data_base64":"AA=="}',
            "data_base64",
        ),
        (
            b'{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":"***"}',
            "data_base64",
        ),
        (b'{"specversion":"1.0","id":"1","source":"/s","type":"t","Bad":"x"}', "Bad"),
    ],
)
def test_structured_documents_breaking_the_spec_are_refused_naming_the_attribute(
    document: bytes, attribute: str
) -> None:
    with pytest.raises(CloudEventError) as info:
        read([("content-type", MEDIA_TYPE.encode())], document)
    assert info.value.attribute == attribute
    assert "topic 't'" in str(info.value)


@pytest.mark.parametrize("value", [b"[1]", b"{", b"\xff\xfe", b'"x"', None, b"{}" * 9_000_000])
def test_malformed_structured_values_get_a_clear_error(value: bytes | None) -> None:
    with pytest.raises(CloudEventError):
        read([("content-type", MEDIA_TYPE.encode())], value)


# --- validation ------------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["id", "source", "specversion", "type"])
def test_required_attributes_are_required_both_ways(missing: str) -> None:
    attrs = {k: v for k, v in BASE.items() if k != missing}
    with pytest.raises(CloudEventError, match=missing) as info:
        write(attrs)
    assert info.value.attribute == missing
    with pytest.raises(CloudEventError, match=missing):
        read([(k, v) for k, v in ce() if k != f"ce_{missing}"], None)


@pytest.mark.parametrize("name", ["Upper", "with-dash", "with_underscore", "é", "", "data"])
def test_attribute_names_must_be_lowercase_alphanumerics(name: str) -> None:
    with pytest.raises(CloudEventError) as info:
        write(Event({**BASE, name: "x"}))
    assert info.value.attribute == name


def test_attribute_names_past_20_characters_are_refused_on_write_but_read() -> None:
    long = "a" * 21
    with pytest.raises(CloudEventError, match="21 characters"):
        write({**BASE, long: "x"})
    assert read([*ce(), (f"ce_{long}", b"x")], None)[long] == "x"
    with pytest.raises(CloudEventError, match="too long"):
        read([*ce(), ("ce_" + "a" * 300, b"x")], None)


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("time", "2018-04-05 03:56:24Z"),  # RFC 3339 needs the T
        ("time", "2018-04-05T03:56:24"),  # and an offset
        ("time", "2018-13-05T03:56:24Z"),
        ("time", "yesterday"),
        ("source", "has space"),
        ("source", "bad%zzescape"),
        ("dataschema", "relative/path"),
        ("subject", ""),
        ("id", ""),
        ("specversion", "2.0"),
    ],
)
def test_attribute_values_must_have_their_types_form(attribute: str, value: str) -> None:
    with pytest.raises(CloudEventError) as info:
        write({**BASE, attribute: value})
    assert info.value.attribute == attribute
    assert value == "" or value not in str(info.value)  # values are never echoed
    with pytest.raises(CloudEventError):
        read(
            [*ce(**{attribute: value})]
            if attribute in BASE
            else [*ce(), (f"ce_{attribute}", value.encode())],
            None,
        )


def test_valid_forms_are_accepted() -> None:
    event = Event(
        {
            **BASE,
            "time": "1985-04-12T23:20:50.123456789+02:00",
            "source": "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66",
            "dataschema": "https://example.com/schema%20v1.json",
            "flag": True,
        }
    )
    assert event.time == datetime(
        1985, 4, 12, 23, 20, 50, 123456, tzinfo=timezone(timedelta(hours=2))
    )
    h, _value = write(event)
    assert h.last_value("ce_flag") == b"true"


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(CloudEventError, match="timezone"):
        Event({**BASE, "time": datetime(2020, 1, 1)})


def test_unknown_specversion_is_refused_on_read() -> None:
    with pytest.raises(CloudEventError, match="specversion") as info:
        read(ce(specversion="0.3"), None)
    assert info.value.attribute == "specversion"


@pytest.mark.parametrize("second", ["ce_id", "CE_ID", "Ce_Id"])
def test_duplicate_ce_headers_are_refused_naming_the_attribute(second: str) -> None:
    with pytest.raises(CloudEventError, match=r"duplicate header.*'id'") as info:
        read([*ce(), (second, b"again")], None)
    assert info.value.attribute == "id"


def test_duplicate_content_type_headers_are_refused() -> None:
    with pytest.raises(CloudEventError, match="content-type"):
        read([*ce(), ("content-type", b"text/plain"), ("content-type", b"application/json")], b"x")


@pytest.mark.parametrize(
    ("headers", "match"),
    [
        ([*ce(), ("ce_subject", b"\xff\xfe")], "not UTF-8"),
        ([*ce()[:1], ("ce_id", None), *ce()[2:]], "'ce_id' for required attribute 'id' has no"),
        ([*ce(), ("ce_subject", None), ("CE_SUBJECT", b"x")], "duplicate header 'ce_subject'"),
        ([*ce(), ("ce_subject", b"x" * 70_000)], "bytes"),
        (
            [*ce(), ("content-type", b"text/plain"), ("ce_datacontenttype", b"text/csv")],
            "'content-type' and 'ce_datacontenttype' disagree",
        ),
        ([*ce(), ("ce_bad-name", b"x")], "lower-case"),
    ],
)
def test_hostile_binary_headers_get_clear_errors(
    headers: list[tuple[str, Any]], match: str
) -> None:
    with pytest.raises(CloudEventError, match=match):
        read(headers, None)


def test_json_data_that_does_not_decode_is_a_clear_error() -> None:
    with pytest.raises(CloudEventError, match="datacontenttype") as info:
        read([*ce(), ("content-type", b"application/json")], b"{not json")
    assert info.value.attribute == "data"


def test_cloud_event_error_is_in_the_tree() -> None:
    assert issubclass(CloudEventError, KHeadersError)
    assert issubclass(CloudEventError, ValueError)


def test_anything_but_an_event_is_refused_by_the_serializer() -> None:
    with pytest.raises(CloudEventError, match="expected a CloudEvent"):
        write(42)
    assert write(None) == (Headers(), None)


# --- the Distributed Tracing extension -------------------------------------------------


def test_event_traceparent_becomes_the_records_trace_header_when_it_has_none() -> None:
    h, _ = write({**BASE, "traceparent": TP, "tracestate": "rojo=1"})
    assert h.last_value("traceparent") == TP.encode()
    assert h.last_value("tracestate") == b"rojo=1"
    assert h.last_value("ce_traceparent") == TP.encode()


def test_the_records_trace_header_is_never_overwritten_by_the_starting_trace() -> None:
    h = Headers([("traceparent", TP2.encode())])  # this hop (the tracing interceptor's)
    h, _ = write({**BASE, "traceparent": TP}, headers=h)
    assert h.last_value("traceparent") == TP2.encode()
    assert h.last_value("ce_traceparent") == TP.encode()


def test_an_event_without_the_extension_takes_the_records_trace_both_ways() -> None:
    h = Headers([("traceparent", TP2.encode()), ("tracestate", b"congo=t61rcWkgMzE")])
    h, _value = write(dict(BASE), headers=h)
    assert h.last_value("ce_traceparent") == TP2.encode()
    assert h.last_value("ce_tracestate") == b"congo=t61rcWkgMzE"
    # reading: from the record's header when ce_traceparent is absent
    event = read([*ce(), ("traceparent", TP.encode())], None)
    assert event["traceparent"] == TP
    assert (
        read([*ce(), ("traceparent", TP.encode())], None, trace_headers=False).get("traceparent")
        is None
    )


def test_an_invalid_trace_header_is_not_copied() -> None:
    assert "traceparent" not in read([*ce(), ("traceparent", b"garbage")], None).attributes
    h, _ = write({**BASE, "traceparent": "garbage"})
    assert "traceparent" not in h


def test_binary_mode_implies_the_content_type_of_text_and_json_data_it_encodes() -> None:
    h, value = write({**BASE, "data": "héllo"})
    assert h.last_value("content-type") == b"text/plain; charset=utf-8"
    assert read(h, value).data == "héllo"
    h, value = write({**BASE, "data": [1]})
    assert h.last_value("content-type") == b"application/json"
    assert read(h, value).data == [1]
    h, value = write({**BASE, "data": b"\x01"})
    assert "content-type" not in h
    assert read(h, value).data == b"\x01"


def test_a_refused_event_leaves_the_records_headers_alone() -> None:
    h = Headers([("ce_id", b"old"), ("keep", b"k")])
    with pytest.raises(CloudEventError, match="21 characters"):
        write(Event({**BASE, "a" * 21: "x"}), headers=h)
    assert h.to_list() == [("ce_id", b"old"), ("keep", b"k")]
