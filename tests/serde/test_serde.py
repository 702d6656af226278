"""Built-in serializers/deserializers and the content-type dispatching deserializer."""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kheaders
from kheaders import (
    BytesDeserializer,
    BytesSerializer,
    ContentTypeDeserializer,
    DecodeError,
    Deserializer,
    DoubleDeserializer,
    DoubleSerializer,
    Headers,
    IntegerDeserializer,
    IntegerSerializer,
    JsonDeserializer,
    JsonSerializer,
    LongDeserializer,
    LongSerializer,
    Serializer,
    StringDeserializer,
    StringSerializer,
    media_type,
)
from kheaders._serde import builtin as _serde
from kheaders._serde import confluent as _serde_confluent
from kheaders._serde import json as _serde_json
from tests.support.doctests import run_doctests

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)

PAIRS = [
    (BytesSerializer(), BytesDeserializer()),
    (StringSerializer(), StringDeserializer()),
    (IntegerSerializer(), IntegerDeserializer()),
    (LongSerializer(), LongDeserializer()),
    (DoubleSerializer(), DoubleDeserializer()),
    (JsonSerializer(), JsonDeserializer()),
]


def roundtrip(ser: Serializer, de: Deserializer, value: object) -> object:
    headers = Headers()
    data = ser.serialize("t", headers, value)
    return de.deserialize("t", headers.close(), data)


@pytest.mark.parametrize(("ser", "de"), PAIRS, ids=lambda x: type(x).__name__)
def test_builtins_meet_the_protocols(ser: object, de: object) -> None:
    assert isinstance(ser, Serializer)
    assert isinstance(de, Deserializer)


@pytest.mark.parametrize(("ser", "de"), PAIRS, ids=lambda x: type(x).__name__)
def test_none_is_a_null_record_both_ways(ser: Serializer, de: Deserializer) -> None:
    headers = Headers()
    assert ser.serialize("t", headers, None) is None
    assert de.deserialize("t", headers, None) is None
    assert len(headers) == 0


@pytest.mark.parametrize("module", [_serde, _serde_json, _serde_confluent])
def test_docstring_examples_hold(module: object) -> None:
    result = run_doctests(module, extraglobs={"Headers": Headers})  # type: ignore[arg-type]
    assert result.attempted > 0
    assert result.failed == 0


# -- bytes ----------------------------------------------------------------------------------


@given(st.binary())
def test_bytes_roundtrip(value: bytes) -> None:
    assert roundtrip(BytesSerializer(), BytesDeserializer(), value) == value


@pytest.mark.parametrize("value", [bytearray(b"ab"), memoryview(b"ab")])
def test_bytes_serializer_copies_bytearray_and_memoryview_to_bytes(value: object) -> None:
    out = BytesSerializer().serialize("t", Headers(), value)
    assert type(out) is bytes
    assert out == b"ab"


@pytest.mark.parametrize("value", ["text", 1, [b"a"]])
def test_bytes_serializer_rejects_other_types_naming_the_topic(value: object) -> None:
    with pytest.raises(TypeError, match="topic 'orders'"):
        BytesSerializer().serialize("orders", Headers(), value)


# -- strings --------------------------------------------------------------------------------


@given(st.text())
def test_string_roundtrip_utf8(value: str) -> None:
    assert roundtrip(StringSerializer(), StringDeserializer(), value) == value


@given(st.text(alphabet=st.characters(max_codepoint=255)))
def test_string_roundtrip_with_configured_codec(value: str) -> None:
    data = StringSerializer("latin-1").serialize("t", Headers(), value)
    assert data == value.encode("latin-1")
    assert StringDeserializer("latin-1").deserialize("t", Headers(), data) == value


def test_string_serializer_rejects_non_str() -> None:
    with pytest.raises(TypeError, match=r"topic 'orders'.*got bytes"):
        StringSerializer().serialize("orders", Headers(), b"raw")


def test_string_serializer_unencodable_text_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"topic 'orders'.*ascii"):
        StringSerializer("ascii").serialize("orders", Headers(), "héllo")


def test_string_deserializer_bad_bytes_is_decode_error_with_offset() -> None:
    with pytest.raises(DecodeError, match="topic 'orders'") as info:
        StringDeserializer().deserialize("orders", Headers(), b"ok\xff")
    assert info.value.offset == 2


def test_unknown_encoding_fails_at_construction() -> None:
    with pytest.raises(LookupError):
        StringSerializer("no-such-codec")
    with pytest.raises(LookupError):
        StringDeserializer("no-such-codec")


def test_string_serializer_adds_no_header_unless_asked() -> None:
    headers = Headers()
    StringSerializer().serialize("t", headers, "x")
    assert len(headers) == 0


def test_string_serializer_sets_text_plain_with_charset_when_asked() -> None:
    headers = Headers([("content-type", b"application/json"), ("a", b"1")])
    StringSerializer(content_type=True).serialize("t", headers, "x")
    assert headers.values("content-type") == [b"text/plain; charset=utf-8"]
    latin = Headers()
    StringSerializer("latin-1", content_type=True).serialize("t", latin, "x")
    assert latin.last_value("content-type") == b"text/plain; charset=iso8859-1"


def test_string_serializer_takes_an_explicit_content_type_and_header_name() -> None:
    headers = Headers()
    StringSerializer(content_type="text/csv", header="contentType").serialize("t", headers, "x")
    assert headers.to_list() == [("contentType", b"text/csv")]


# -- numbers --------------------------------------------------------------------------------


@given(INT32)
def test_integer_roundtrip_and_kafka_layout(value: int) -> None:
    data = IntegerSerializer().serialize("t", Headers(), value)
    assert data == value.to_bytes(4, "big", signed=True)
    assert IntegerDeserializer().deserialize("t", Headers(), data) == value


@given(INT64)
def test_long_roundtrip_and_kafka_layout(value: int) -> None:
    data = LongSerializer().serialize("t", Headers(), value)
    assert data == value.to_bytes(8, "big", signed=True)
    assert LongDeserializer().deserialize("t", Headers(), data) == value


@given(st.floats(allow_nan=False))
def test_double_roundtrip_and_ieee_layout(value: float) -> None:
    data = DoubleSerializer().serialize("t", Headers(), value)
    assert data == struct.pack(">d", value)
    assert DoubleDeserializer().deserialize("t", Headers(), data) == value


def test_double_keeps_nan() -> None:
    out = roundtrip(DoubleSerializer(), DoubleDeserializer(), math.nan)
    assert isinstance(out, float)
    assert math.isnan(out)


def test_double_serializer_accepts_int() -> None:
    assert DoubleSerializer().serialize("t", Headers(), 2) == struct.pack(">d", 2.0)


@pytest.mark.parametrize(
    ("ser", "value"),
    [
        (IntegerSerializer(), 2**31),
        (IntegerSerializer(), -(2**31) - 1),
        (LongSerializer(), 2**63),
        (LongSerializer(), -(2**63) - 1),
    ],
)
def test_integers_out_of_range_are_value_errors(ser: Serializer, value: int) -> None:
    with pytest.raises(ValueError, match=f"topic 'orders': {value} does not fit"):
        ser.serialize("orders", Headers(), value)


def test_double_serializer_int_too_large_is_overflow_error() -> None:
    with pytest.raises(OverflowError, match="topic 'orders'"):
        DoubleSerializer().serialize("orders", Headers(), 10**400)


@pytest.mark.parametrize("ser", [IntegerSerializer(), LongSerializer(), DoubleSerializer()])
@pytest.mark.parametrize("value", [True, "1", 1.5j, b"\x00"])
def test_number_serializers_reject_other_types(ser: Serializer, value: object) -> None:
    with pytest.raises(TypeError, match="topic 'orders'"):
        ser.serialize("orders", Headers(), value)


def test_integer_serializers_reject_float() -> None:
    with pytest.raises(TypeError, match="got float"):
        LongSerializer().serialize("t", Headers(), 1.0)


@pytest.mark.parametrize(
    ("de", "size"), [(IntegerDeserializer(), 4), (LongDeserializer(), 8), (DoubleDeserializer(), 8)]
)
@pytest.mark.parametrize("delta", [-1, 1])
def test_number_deserializers_require_the_exact_length(
    de: Deserializer, size: int, delta: int
) -> None:
    with pytest.raises(DecodeError, match=f"topic 'orders'.*exactly {size} bytes, got"):
        de.deserialize("orders", Headers(), b"\x00" * (size + delta))


def test_number_deserializers_reject_empty_bytes() -> None:
    with pytest.raises(DecodeError, match="got 0"):
        LongDeserializer().deserialize("t", Headers(), b"")


# -- JSON -----------------------------------------------------------------------------------


@given(JSON_VALUES.filter(lambda v: v is not None))
def test_json_roundtrip(value: object) -> None:
    assert roundtrip(JsonSerializer(), JsonDeserializer(), value) == value


def test_json_is_compact_utf8() -> None:
    data = JsonSerializer().serialize("t", Headers(), {"name": "é", "n": [1, 2]})
    assert data == '{"name":"é","n":[1,2]}'.encode()


def test_json_sort_keys() -> None:
    data = JsonSerializer(sort_keys=True).serialize("t", Headers(), {"b": 1, "a": 2})
    assert data == b'{"a":2,"b":1}'


def test_json_serializer_sets_the_content_type() -> None:
    headers = Headers([("trace", b"x")])
    JsonSerializer().serialize("t", headers, [1])
    assert headers.to_list() == [("trace", b"x"), ("content-type", b"application/json")]


def test_json_content_type_replaces_existing_ones_instead_of_duplicating() -> None:
    headers = Headers(
        [("content-type", b"text/plain"), ("a", b"1"), ("content-type", b"application/xml")]
    )
    ser = JsonSerializer()
    ser.serialize("t", headers, 1)
    ser.serialize("t", headers, 2)
    assert headers.to_list() == [("content-type", b"application/json"), ("a", b"1")]


def test_json_content_type_can_be_custom_or_off() -> None:
    custom = Headers()
    JsonSerializer("application/vnd.order+json").serialize("t", custom, {})
    assert custom.values("content-type") == [b"application/vnd.order+json"]
    off = Headers([("content-type", b"text/plain")])
    JsonSerializer(content_type=False).serialize("t", off, {})
    assert off.values("content-type") == [b"text/plain"]


def test_json_tombstone_adds_no_header() -> None:
    headers = Headers()
    assert JsonSerializer().serialize("t", headers, None) is None
    assert len(headers) == 0


def test_json_serializer_unencodable_is_type_error_naming_topic() -> None:
    with pytest.raises(TypeError, match="topic 'orders': cannot encode as JSON"):
        JsonSerializer().serialize("orders", Headers(), {"when": object()})


@pytest.mark.parametrize("value", [math.nan, math.inf, [-math.inf]])
def test_json_serializer_rejects_nan_and_infinity(value: object) -> None:
    with pytest.raises(ValueError, match="topic 'orders'"):
        JsonSerializer().serialize("orders", Headers(), value)


def test_json_serializer_rejects_circular_data() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match=r"topic 'orders'.*ircular"):
        JsonSerializer().serialize("orders", Headers(), loop)


def test_json_serializer_leaves_headers_alone_when_encoding_fails() -> None:
    headers = Headers([("content-type", b"text/plain")])
    with pytest.raises(TypeError):
        JsonSerializer().serialize("t", headers, {1j})
    assert headers.to_list() == [("content-type", b"text/plain")]


@pytest.mark.parametrize(
    ("data", "offset"),
    [(b'{"a": }', 6), ('{"é": x}'.encode(), 7), (b"[1] [2]", 4), (b"", 0)],
)
def test_json_deserializer_invalid_json_is_decode_error_with_byte_offset(
    data: bytes, offset: int
) -> None:
    with pytest.raises(DecodeError, match="topic 'orders': invalid JSON") as info:
        JsonDeserializer().deserialize("orders", Headers(), data)
    assert info.value.offset == offset


def test_json_deserializer_rejects_non_utf8() -> None:
    with pytest.raises(DecodeError, match="not UTF-8") as info:
        JsonDeserializer().deserialize("orders", Headers(), b'"\xff"')
    assert info.value.offset == 1


@pytest.mark.parametrize("constant", [b"NaN", b"[Infinity]", b"-Infinity"])
def test_json_deserializer_rejects_non_json_constants(constant: bytes) -> None:
    with pytest.raises(DecodeError, match="not valid JSON"):
        JsonDeserializer().deserialize("orders", Headers(), constant)


def test_json_deserializer_deep_nesting_is_decode_error_not_crash() -> None:
    with pytest.raises(DecodeError, match="nested too deeply"):
        JsonDeserializer().deserialize("orders", Headers(), b"[" * 200_000 + b"]" * 200_000)


def test_json_deserializer_gives_plain_data_only() -> None:
    data = b'{"__class__": "os.system", "__reduce__": ["rm"], "a": [1, 2.5, true, null]}'
    out = JsonDeserializer().deserialize("t", Headers(), data)
    assert out == json.loads(data)
    assert type(out) is dict


# -- content-type dispatch ------------------------------------------------------------------


def dispatcher(**kwargs: object) -> ContentTypeDeserializer:
    return ContentTypeDeserializer(
        {
            "application/json": JsonDeserializer(),
            "text/plain": StringDeserializer(),
            "application/octet-stream": BytesDeserializer(),
        },
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("content_type", "data", "expected"),
    [
        (b"application/json", b'{"a":1}', {"a": 1}),
        (b"text/plain", b"hi", "hi"),
        (b"application/octet-stream", b"\x00\xff", b"\x00\xff"),
        (b"text/plain; charset=utf-8", "é".encode(), "é"),
        (b"Application/JSON; charset=UTF-8", b"[1]", [1]),
        (b"  TEXT/PLAIN ;format=flowed", b"x", "x"),
    ],
)
def test_dispatch_by_media_type_ignoring_case_and_parameters(
    content_type: bytes, data: bytes, expected: object
) -> None:
    headers = Headers([("content-type", content_type)]).close()
    assert dispatcher().deserialize("t", headers, data) == expected


def test_one_topic_carries_several_formats_in_sequence() -> None:
    d = dispatcher()
    records = [
        (JsonSerializer(), {"n": 1}),
        (StringSerializer(content_type=True), "plain"),
        (JsonSerializer(), [2]),
    ]
    out = []
    for ser, value in records:
        headers = Headers()
        data = ser.serialize("t", headers, value)
        out.append(d.deserialize("t", headers.close(), data))
    assert out == [{"n": 1}, "plain", [2]]


def test_dispatch_uses_the_last_content_type_header() -> None:
    headers = Headers([("content-type", b"text/plain"), ("content-type", b"application/json")])
    assert dispatcher().deserialize("t", headers, b"[1]") == [1]


def test_unknown_content_type_is_an_error_naming_the_type_and_topic() -> None:
    headers = Headers([("content-type", b"application/xml; charset=utf-8")])
    with pytest.raises(ValueError, match=r"topic 'orders'.*'application/xml; charset=utf-8'") as e:
        dispatcher().deserialize("orders", headers, b"<a/>")
    assert "application/json" in str(e.value)


def test_missing_content_type_is_an_error_without_default() -> None:
    with pytest.raises(ValueError, match="topic 'orders': record has no 'content-type' header"):
        dispatcher().deserialize("orders", Headers(), b"x")


def test_null_content_type_header_counts_as_missing() -> None:
    with pytest.raises(ValueError, match="no 'content-type' header"):
        dispatcher().deserialize("orders", Headers([("content-type", None)]), b"x")


def test_default_handles_unknown_and_missing_content_types() -> None:
    d = dispatcher(default=BytesDeserializer())
    assert d.deserialize("t", Headers([("content-type", b"image/png")]), b"\x89P") == b"\x89P"
    assert d.deserialize("t", Headers(), b"raw") == b"raw"


def test_repeated_dispatch_stays_correct_for_many_distinct_header_values() -> None:
    d = dispatcher(default=BytesDeserializer())
    for i in range(600):
        json_headers = Headers([("content-type", f"application/json; v={i}".encode())])
        assert d.deserialize("t", json_headers, b"[1]") == [1]
        other = Headers([("content-type", f"x/y{i}".encode())])
        assert d.deserialize("t", other, b"[1]") == b"[1]"


def test_dispatch_header_name_is_configurable() -> None:
    d = dispatcher(header="contentType")
    headers = Headers([("contentType", b"text/plain"), ("content-type", b"application/json")])
    assert d.deserialize("t", headers, b"[1]") == "[1]"


def test_dispatch_rejects_duplicate_media_types_and_non_deserializers() -> None:
    with pytest.raises(ValueError, match="twice"):
        ContentTypeDeserializer(
            {"text/plain": StringDeserializer(), "Text/Plain; charset=x": StringDeserializer()}
        )
    with pytest.raises(TypeError, match="no deserialize"):
        ContentTypeDeserializer({"text/plain": StringSerializer()})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="default"):
        ContentTypeDeserializer({}, default=JsonSerializer())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no media type"):
        ContentTypeDeserializer({" ; x=1": StringDeserializer()})


def test_errors_from_the_chosen_deserializer_propagate() -> None:
    headers = Headers([("content-type", b"application/json")])
    with pytest.raises(DecodeError, match="invalid JSON"):
        dispatcher().deserialize("t", headers, b"{")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("application/json", "application/json"),
        (b"Text/HTML; charset=ISO-8859-4", "text/html"),
        (" a/b ;", "a/b"),
        (b"", ""),
    ],
)
def test_media_type(value: str | bytes, expected: str) -> None:
    assert media_type(value) == expected


def test_public_names_are_exported() -> None:
    for name in ("JsonSerializer", "ContentTypeDeserializer", "from_confluent", "to_confluent"):
        assert name in kheaders.__all__


def test_docs_examples_run() -> None:
    """Every python block in docs/serde.md that needs no broker or registry runs as written."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "serde.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    offline = [b for b in blocks if "bootstrap.servers" not in b and "schema_registry" not in b]
    assert len(offline) >= 4
    namespace: dict[str, object] = {}
    for block in offline:
        exec(compile(block, "docs/serde.md", "exec"), namespace)
