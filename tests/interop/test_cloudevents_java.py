"""kheaders.cloudevents and the CloudEvents Java SDK (``cloudevents-kafka`` 4) on one topic.

Binary and structured content mode, both ways, with extensions (text, integer, boolean),
with JSON data, bytes data and no data. One JVM writes the Java side's six events
(interop/jvm CloudEvents.java, the same events as ``EVENTS`` here) and reads kheaders' six.
docs/cloudevents.md ("Side by side with the CloudEvents Java SDK") points at these tests.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from kheaders import Producer
from kheaders.broker import create_topic
from kheaders.cloudevents import CloudEventDeserializer, CloudEventSerializer, Event
from tests.interop.jvm import Event as JavaEvent
from tests.interop.jvm import Jvm, b64, decoded, read_partition0

pytestmark = pytest.mark.integration

TIME = "2018-04-05T03:56:24Z"
JSON_DATA = {"amount": 12.5, "name": "café"}


def events(source: str) -> list[tuple[str, Event]]:
    """(mode, event): what CloudEvents.java writes, with ``source`` for the writer."""
    out: list[tuple[str, Event]] = []
    for mode in ("binary", "structured"):
        base = {"specversion": "1.0", "source": source, "type": "com.example.interop"}
        base["time"] = TIME
        out.append((mode, Event(
            {**base, "id": f"{mode}-json", "datacontenttype": "application/json",
             "subject": "order/1", "dataschema": "https://example.com/order.json",
             "comexampleextension1": "value", "myint": 42, "mybool": True},
            JSON_DATA,
        )))  # fmt: skip
        out.append((mode, Event(
            {**base, "id": f"{mode}-bytes", "datacontenttype": "application/octet-stream",
             "partitionkey": "order-1"},
            b"\x00\x01\xfe\xff",
        )))  # fmt: skip
        out.append((mode, Event({**base, "id": f"{mode}-nodata", "comexampleextension1": "value"})))
    return out


Raw = tuple[list[tuple[str, bytes | None]], bytes | None]


@dataclass(frozen=True)
class Both:
    java: list[JavaEvent]
    python: dict[str, Event]  # what kheaders read of Java's events, by id
    raw_java: dict[str, Raw]  # Java's records as they are on the wire, by id
    raw_python: dict[str, Raw]  # kheaders' records

    def java_read(self, event_id: str) -> JavaEvent:
        [found] = [e for e in self.java if e["event"] == "received" and key_of(e) == event_id]
        return found


def key_of(e: JavaEvent) -> str:
    return str(e["attributes"]["id"]) if "attributes" in e else "?"


def _read(bootstrap: str, topic: str, count: int, **config: Any) -> list[Any]:
    return read_partition0(bootstrap, topic, count, **config)


def _raw(bootstrap: str, topic: str) -> dict[str, Raw]:
    return {
        m.key().decode(): (m.headers().to_list(), m.value()) for m in _read(bootstrap, topic, 6)
    }


@pytest.fixture(scope="module")
def both(jvm: Jvm, bootstrap: str) -> Both:
    stem = f"ce-java-{uuid.uuid4().hex[:8]}"
    to_java = create_topic(bootstrap, f"{stem}-in")
    from_java = create_topic(bootstrap, f"{stem}-out")
    for mode in ("binary", "structured"):
        producer = Producer(
            {"bootstrap.servers": bootstrap}, value_serializer=CloudEventSerializer(mode)
        )
        for m, event in events("/interop/python"):
            if m == mode:
                producer.produce(to_java, event, key=event.id.encode())
        assert producer.flush(30) == 0
    found = jvm.run("cloudevents", bootstrap, from_java, to_java, "6")
    read = _read(bootstrap, from_java, 6, value_deserializer=CloudEventDeserializer())
    python = {m.key().decode(): m.value() for m in read}
    return Both(found, python, _raw(bootstrap, from_java), _raw(bootstrap, to_java))


def plain(attributes: Any) -> dict[str, str]:
    """Attributes as text, as binary mode carries them (``time`` in RFC 3339, UTC as Z)."""
    out = {}
    for name, value in dict(attributes).items():
        if isinstance(value, dt.datetime):
            out[name] = value.isoformat().replace("+00:00", "Z")
        elif isinstance(value, bool):
            out[name] = str(value).lower()
        else:
            out[name] = str(value)
    return out


CORE = {"specversion", "id", "source", "type", "datacontenttype", "dataschema", "subject", "time"}
WITH_DATA = [(m, e) for m, e in events("/interop/python") if e.data is not None]
IDS = [e.id for _, e in events("/interop/python")]


@pytest.mark.parametrize(("mode", "sent"), WITH_DATA, ids=[e.id for _, e in WITH_DATA])
def test_the_java_sdk_reads_kheaders_events_with_every_attribute_and_the_data(
    both: Both, mode: str, sent: Event
) -> None:
    got = both.java_read(sent.id)
    expected = plain(sent.attributes)
    assert got["attributes"] == {k: v for k, v in expected.items() if k in CORE}
    extensions = {k: v["value"] for k, v in got["extensions"].items()}
    assert extensions == {k: v for k, v in expected.items() if k not in CORE}
    # binary mode has only text; structured keeps JSON's integers and booleans
    kinds = {v["type"] for k, v in got["extensions"].items() if k in ("myint", "mybool")}
    assert kinds <= ({"String"} if mode == "binary" else {"Integer", "Boolean"})
    data = b64(got["data"])
    assert data is not None
    if sent.get("datacontenttype") == "application/json":
        assert json.loads(data) == sent.data
    else:
        assert data == sent.data


@pytest.mark.parametrize(("mode", "sent"), events("/interop/java"), ids=IDS)
def test_kheaders_reads_the_java_sdks_events_with_every_attribute_and_the_data(
    both: Both, mode: str, sent: Event
) -> None:
    got = both.python[sent.id]
    assert plain(got.attributes) == plain(sent.attributes)
    if mode == "structured":  # typed extensions survive the JSON document, not headers
        assert {k: got[k] for k in ("myint", "mybool") if k in got} == {
            k: sent[k] for k in ("myint", "mybool") if k in sent
        }
    assert got.data == sent.data


@pytest.mark.parametrize("event_id", [i for i in IDS if i.startswith("binary")])
def test_binary_records_carry_the_same_headers_in_another_order(both: Both, event_id: str) -> None:
    def named(raw: Raw) -> dict[str, bytes | None]:
        headers = dict(raw[0])
        assert len(headers) == len(raw[0])  # one header per attribute
        headers.pop("ce_source")  # the writer's own source
        return headers

    java, python = both.raw_java[event_id], both.raw_python[event_id]
    assert named(java) == named(python)
    # the binding fixes no order: the SDK writes id before source, kheaders after type
    assert [k for k, _ in java[0]][:4] == ["ce_specversion", "ce_id", "ce_source", "ce_type"]
    assert [k for k, _ in python[0]][:5] == [
        "ce_specversion", "ce_source", "ce_type", "ce_time", "ce_id"
    ]  # fmt: skip


def test_structured_records_carry_only_the_content_type(both: Both) -> None:
    for raws in (both.raw_java, both.raw_python):
        for event_id in IDS:
            if event_id.startswith("structured"):
                assert raws[event_id][0] == [("content-type", b"application/cloudevents+json")]


def test_a_data_less_binary_event_is_a_null_value_which_the_java_sdk_reads_as_no_event(
    both: Both,
) -> None:
    # both write the binding's tombstone: no value at all
    assert both.raw_java["binary-nodata"][1] is None
    assert both.raw_python["binary-nodata"][1] is None
    # kheaders reads the Java SDK's as the event it is ...
    assert both.python["binary-nodata"].id == "binary-nodata"
    # ... the Java SDK's deserializer gives null for a null value: no event to read
    nameless = [e for e in both.java if e["event"] == "received" and "attributes" not in e]
    assert [("ce_id", b"binary-nodata") in decoded(e["headers"]) for e in nameless] == [True]
