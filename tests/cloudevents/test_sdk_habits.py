"""Records as the other CloudEvents SDKs' Kafka bindings write them read as the events they
carry (issue 35, item 15). Each vector is built header by header as the cited source writes
it (repository @ commit, file, lines); the Python SDK 1.x runs for real. The JavaScript SDK
also runs for real, through Node, in test_sdk_javascript.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from cloudevents.v1 import http as v1_http
from cloudevents.v1 import kafka as v1_kafka

from kheaders import CloudEventError, Headers
from kheaders.cloudevents import CloudEventDeserializer, Event

JS = "cloudevents/sdk-javascript@bf5d53f2862248d72d9869cf5173f51b32583faf (10.0.0)"
GO = "cloudevents/sdk-go@d6f403090375c4e07e693d28e1d4d8c7dd4475e9"
JAVA = "cloudevents/sdk-java@ecde1d4a36f58df8786e4091159d399a3a4e186d"

Pairs = list[tuple[str, bytes | None]]


def read(headers: Pairs, value: bytes | None) -> Event:
    event: Event = CloudEventDeserializer().deserialize("t", Headers(headers).close(), value)
    return event


def js_binary(datacontenttype: bytes | None, **extra: bytes | None) -> Pairs:
    """``Kafka.binary(event)`` sent by kafkajs 2.2.4. ``toBinaryKafkaMessage``
    (src/message/kafka/index.ts lines 64-79) puts ``content-type: event.datacontenttype``
    first, then ``headersFor(event)`` (src/message/kafka/headers.ts lines 58-72): ``ce_`` and
    every own property of the event but ``data`` and ``data_base64``, in the order the
    CloudEvent constructor assigns them (src/event/cloudevent.ts lines 57-101, then the
    extensions), the optional ones assigned even when undefined. kafkajs sends an undefined
    header value as a null header (src/protocol/encoder.js ``writeVarIntBytes``: ``value ==
    null`` writes length -1), keys in ``Object.keys`` order (recordBatch/record/v0 lines
    25-30)."""
    return [
        ("content-type", datacontenttype),
        ("ce_id", b"js-1"),
        ("ce_time", b"2026-11-28T00:54:49.536Z"),
        ("ce_type", b"com.example.someevent"),
        ("ce_source", b"/mycontext"),
        ("ce_specversion", b"1.0"),
        ("ce_datacontenttype", datacontenttype),
        ("ce_subject", None),
        ("ce_datacontentencoding", None),
        ("ce_dataschema", None),
        ("ce_schemaurl", None),
        *[(f"ce_{k}", v) for k, v in extra.items()],
    ]


JS_TIME = datetime(2026, 11, 28, 0, 54, 49, 536000, tzinfo=UTC)
JS_BASE = {
    "specversion": "1.0",
    "id": "js-1",
    "source": "/mycontext",
    "type": "com.example.someevent",
    "time": JS_TIME,
}


def test_js_binary_content_type_and_ce_datacontenttype_agreeing_are_one_attribute() -> None:
    headers = js_binary(b"application/json", partitionkey=b"order-7", comexampleext=b"v")
    event = read(headers, b'{"a":1}')
    assert dict(event.attributes) == {
        **JS_BASE,
        "datacontenttype": "application/json",
        "partitionkey": "order-7",
        "comexampleext": "v",
    }
    assert event.data == {"a": 1}


def test_js_binary_without_datacontenttype_or_data_its_null_headers_are_absent() -> None:
    event = read(js_binary(None), None)
    assert dict(event.attributes) == JS_BASE
    assert event.data is None
    bytes_data = read(js_binary(None), b"\xff\x00\x01")  # data: Buffer.from([255, 0, 1])
    assert bytes_data.data == b"\xff\x00\x01"


def test_content_type_and_ce_datacontenttype_that_disagree_are_refused_naming_both() -> None:
    headers = js_binary(b"application/json")
    headers[6] = ("ce_datacontenttype", b"text/plain")
    with pytest.raises(CloudEventError) as refused:
        read(headers, b"{}")
    assert "'content-type' and 'ce_datacontenttype' disagree" in str(refused.value)
    assert refused.value.attribute == "datacontenttype"
    assert "text/plain" not in str(refused.value)  # names headers, never values


def test_ce_datacontenttype_alone_is_the_datacontenttype() -> None:
    headers = [(k, v) for k, v in js_binary(b"text/plain") if k != "content-type"]
    event = read(headers, b"hi")
    assert event.get("datacontenttype") == "text/plain"
    assert event.data == "hi"


def test_a_null_required_attribute_header_is_refused_by_name() -> None:
    headers = js_binary(b"text/plain")
    headers[1] = ("ce_id", None)
    with pytest.raises(CloudEventError, match="'ce_id' for required attribute 'id' has no value"):
        read(headers, b"hi")


def test_js_structured_with_a_charset_parameter_and_partitionkey() -> None:
    """``toStructuredKafkaMessage`` (index.ts lines 89-107): ``content-type:
    application/cloudevents+json; charset=utf-8``, the event's JSON (its ``toJSON``,
    cloudevent.ts lines 143-152), key = ``partitionkey``."""
    value = (
        b'{"id":"js-1","time":"2026-11-28T00:54:49.536Z","type":"com.example.someevent",'
        b'"source":"/mycontext","specversion":"1.0","datacontenttype":"application/json",'
        b'"data":{"a":1},"partitionkey":"order-7"}'
    )
    headers: Pairs = [("content-type", b"application/cloudevents+json; charset=utf-8")]
    event = read(headers, value)
    assert event.get("partitionkey") == "order-7"
    assert event.data == {"a": 1}
    assert event.get("time") == JS_TIME


def go_binary() -> Pairs:
    """sdk-go's ``kafka_sarama`` / ``kafka_confluent`` writers
    (protocol/kafka_sarama/v2/write_producer_message.go lines 102-144,
    protocol/kafka_confluent/v2/write_producer_message.go lines 84-125): ``datacontenttype``
    as ``content-type``, every other attribute and extension as ``ce_<name>``, values through
    ``types.Format`` (v2/types/value.go line 28: time as RFC 3339 with nanoseconds, UTC);
    ``partitionkey`` stays a header and also becomes the key (kafka_sarama lines 36-60)."""
    return [
        ("ce_specversion", b"1.0"),
        ("ce_id", b"go-1"),
        ("ce_source", b"/mycontext"),
        ("ce_type", b"com.example.someevent"),
        ("ce_subject", b"s-1"),
        ("content-type", b"application/json"),
        ("ce_time", b"2026-11-25T21:30:00.123456789Z"),
        ("ce_partitionkey", b"order-7"),
        ("ce_comexampleext", b"10"),
    ]


def test_go_binary_nanosecond_time_and_partitionkey_header() -> None:
    event = read(go_binary(), b'{"n":1}')
    assert event.get("time") == datetime(2026, 11, 25, 21, 30, 0, 123456, tzinfo=UTC)
    assert event.get("partitionkey") == "order-7"
    assert event.get("comexampleext") == "10"
    assert event.get("datacontenttype") == "application/json"
    assert event.data == {"n": 1}


def test_go_and_java_structured_content_type_without_parameters() -> None:
    """sdk-go ``SetStructuredEvent`` (kafka_sarama lines 66-80, kafka_confluent lines 46-60)
    and sdk-java ``setEvent`` (kafka/.../impl/BaseKafkaMessageWriterImpl.java) write
    ``content-type: application/cloudevents+json`` (the format's media type) and nothing
    else."""
    value = (
        b'{"specversion":"1.0","id":"go-1","source":"/mycontext","type":"t",'
        b'"time":"2026-11-25T21:30:00.123456789Z","datacontenttype":"text/plain","data":"hi"}'
    )
    event = read([("content-type", b"application/cloudevents+json")], value)
    assert (event.get("id"), event.data) == ("go-1", "hi")


def test_java_binary_offset_time_and_content_type() -> None:
    """sdk-java (kafka/src/main/java/io/cloudevents/kafka/impl/KafkaHeaders.java:
    ``datacontenttype`` → ``content-type``, others ``ce_<name>``; values UTF-8; time by
    ``ISO_OFFSET_DATE_TIME``, api/.../types/Time.java line 71); the
    ``PartitionKeyExtensionInterceptor`` copies ``partitionkey`` into the key and leaves the
    header."""
    headers: Pairs = [
        ("ce_specversion", b"1.0"),
        ("ce_id", b"java-1"),
        ("ce_source", b"/mycontext"),
        ("ce_type", b"com.example.someevent"),
        ("content-type", b"text/plain"),
        ("ce_time", b"2026-11-25T23:30:00.123456789+02:00"),
        ("ce_partitionkey", b"order-7"),
    ]
    event = read(headers, b"hi")
    plus_two = timezone(timedelta(hours=2))
    assert event.get("time") == datetime(2026, 11, 25, 23, 30, 0, 123456, tzinfo=plus_two)
    assert (event.get("partitionkey"), event.data) == ("order-7", "hi")


# -- the Python SDK 1.x (cloudevents.v1.kafka), run for real ---------------------------------


def v1_event(**attributes: Any) -> Any:
    base = {"type": "com.example.someevent", "source": "/mycontext", "id": "py-1"}
    base["time"] = "2026-11-25T21:30:00.123456+00:00"
    return v1_http.CloudEvent({**base, **attributes}, attributes.pop("data", {"a": 1}))


def as_record(message: Any) -> tuple[Pairs, bytes]:
    """Headers and value as a Kafka client sends the SDK's ``KafkaMessage`` (str as UTF-8)."""
    value = message.value
    return list(message.headers.items()), value.encode() if isinstance(value, str) else value


def test_python_v1_binary_partitionkey_only_as_the_key() -> None:
    """``to_binary`` (src/cloudevents/v1/kafka/conversion.py lines 69-111) writes
    ``partitionkey`` as the key only, not as a header."""
    message = v1_kafka.to_binary(
        v1_event(datacontenttype="application/json", partitionkey="order-7", comexampleext="v")
    )
    assert message.key == "order-7"
    event = read(*as_record(message))
    assert event.get("partitionkey") is None
    assert event.get("comexampleext") == "v"
    assert event.data == {"a": 1}


@pytest.mark.parametrize("datacontenttype", ["application/json", None])
def test_python_v1_structured_labelled_with_the_datas_content_type_or_none(
    datacontenttype: str | None,
) -> None:
    """``to_structured`` (conversion.py lines 173-229) moves ``datacontenttype`` out of the
    document into ``content-type`` (line 217), or writes no header at all: no
    ``application/cloudevents+json``, and no ``ce_`` headers either."""
    extra = {} if datacontenttype is None else {"datacontenttype": datacontenttype}
    message = v1_kafka.to_structured(v1_event(partitionkey="order-7", **extra))
    assert not any(k.startswith("ce_") for k in message.headers)
    event = read(*as_record(message))
    assert event.get("datacontenttype") == datacontenttype
    assert (event.get("id"), event.get("partitionkey"), event.data) == ("py-1", "order-7", {"a": 1})


def test_a_mislabelled_structured_event_whose_content_type_disagrees_is_refused() -> None:
    value = b'{"specversion":"1.0","id":"1","source":"/s","type":"t","datacontenttype":"a/b"}'
    with pytest.raises(CloudEventError, match="disagree"):
        read([("content-type", b"text/plain")], value)


def test_a_record_with_neither_ce_headers_nor_an_event_is_still_refused_by_name() -> None:
    with pytest.raises(CloudEventError, match="required attribute 'id' is missing"):
        read([("content-type", b"application/json")], b'{"a": 1}')
