"""Typed header values: TEXT, LONG, VARLONG, UUID, BOOL, JSON and the Headers conveniences."""

from __future__ import annotations

import contextlib
import math
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import DecodeError, Headers, ReadOnlyHeadersError
from kheaders.values import (
    BOOL,
    JSON,
    LONG,
    TEXT,
    TEXT_LENIENT,
    UUID,
    VARLONG,
    JsonValue,
    TextCodec,
    ValueCodec,
)

I64 = st.integers(-(2**63), 2**63 - 1)
JSON_DATA: st.SearchStrategy[JsonValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text().filter(lambda s: not any("\ud800" <= c <= "\udfff" for c in s)),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(max_size=5).filter(lambda s: not any("\ud800" <= c <= "\udfff" for c in s)),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
ALL_CODECS: list[ValueCodec[object]] = [TEXT, TEXT_LENIENT, LONG, VARLONG, UUID, BOOL, JSON]  # type: ignore[list-item]


def test_every_codec_has_a_name() -> None:
    assert [c.name for c in ALL_CODECS] == [
        "text",
        "text-lenient",
        "long",
        "varlong",
        "uuid",
        "bool",
        "json",
    ]


# -- layouts ------------------------------------------------------------------------------


def test_long_is_kafka_long_serializer_layout() -> None:
    assert LONG.encode(1) == bytes(7) + b"\x01"
    assert LONG.encode(-1) == b"\xff" * 8
    assert LONG.encode(2**63 - 1).hex() == "7fffffffffffffff"
    assert LONG.encode(-(2**63)).hex() == "8000000000000000"
    assert LONG.decode(bytes.fromhex("0000000000000100")) == 256


def test_varlong_is_zigzag() -> None:
    assert VARLONG.encode(0) == b"\x00"
    assert VARLONG.encode(-1) == b"\x01"
    assert VARLONG.encode(64) == b"\x80\x01"
    assert VARLONG.decode(bytes.fromhex("ff ff ff ff ff ff ff ff ff 01")) == -(2**63)


def test_uuid_bool_text_and_json_layouts() -> None:
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert UUID.encode(u) == u.bytes
    assert BOOL.encode(True) == b"\x01"
    assert BOOL.encode(False) == b"\x00"
    assert TEXT.encode("héllo") == "héllo".encode()
    assert JSON.encode({"b": [1, 2.5, None, True], "a": "é"}) == (
        '{"b":[1,2.5,null,true],"a":"é"}'.encode()
    )


# -- decode rejects ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codec", "data", "match"),
    [
        (LONG, bytes(7), "exactly 8"),
        (LONG, bytes(9), "exactly 8"),
        (VARLONG, b"", "truncated"),
        (VARLONG, b"\x00\x00", "left after"),
        (VARLONG, b"\xff" * 10 + b"\x01", "longer than"),
        (UUID, bytes(15), "exactly 16"),
        (BOOL, b"\x02", "00 or 01"),
        (BOOL, b"", "00 or 01"),
        (BOOL, b"\x01\x00", "00 or 01"),
        (TEXT, b"ab\xff", "UTF-8"),
        (JSON, b"{", "invalid JSON"),
        (JSON, b"\xff", "UTF-8"),
        (JSON, b"NaN", "NaN"),
        (JSON, b"[Infinity]", "Infinity"),
        (JSON, b"[" * 100_000 + b"]" * 100_000, "invalid JSON"),
        (JSON, b"1" * 5000, "invalid JSON"),
    ],
)
def test_decoders_reject_bad_bytes_with_decode_error(
    codec: ValueCodec[object], data: bytes, match: str
) -> None:
    with pytest.raises(DecodeError, match=match):
        codec.decode(data)


def test_text_decode_error_points_at_the_bad_byte() -> None:
    with pytest.raises(DecodeError) as info:
        TEXT.decode(b"ab\xffcd")
    assert info.value.offset == 2


def test_json_decode_error_reports_a_byte_offset() -> None:
    with pytest.raises(DecodeError) as info:
        JSON.decode('["é", }'.encode())
    assert info.value.offset == 7


def test_lenient_text_replaces_bad_bytes() -> None:
    assert TEXT_LENIENT.decode(b"a\xffb") == "a\ufffdb"
    assert TextCodec(errors="replace").decode(b"\xff") == "\ufffd"
    with pytest.raises(ValueError, match="errors"):
        TextCodec(errors="ignore")  # type: ignore[arg-type]


def test_json_never_instantiates_classes() -> None:
    data = b'{"__class__": "os.system", "py/object": "x", "$type": "y"}'
    assert JSON.decode(data) == {"__class__": "os.system", "py/object": "x", "$type": "y"}


# -- encode rejects ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codec", "value", "error"),
    [
        (LONG, 2**63, ValueError),
        (LONG, -(2**63) - 1, ValueError),
        (LONG, "1", TypeError),
        (LONG, True, TypeError),
        (LONG, 1.0, TypeError),
        (VARLONG, 2**63, ValueError),
        (VARLONG, None, TypeError),
        (UUID, "12345678-1234-5678-1234-567812345678", TypeError),
        (BOOL, 1, TypeError),
        (TEXT, b"x", TypeError),
        (TEXT, "\ud800", ValueError),
        (JSON, math.nan, ValueError),
        (JSON, {1, 2}, TypeError),
        (JSON, object(), TypeError),
    ],
)
def test_encoders_reject_values_they_cannot_represent(
    codec: ValueCodec[object], value: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        codec.encode(value)


def test_json_rejects_circular_values() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match=r"[Cc]ircular"):
        JSON.encode(loop)  # type: ignore[arg-type]


# -- round trips and robustness --------------------------------------------------------------


@given(I64)
def test_long_and_varlong_round_trip(n: int) -> None:
    assert LONG.decode(LONG.encode(n)) == n
    assert VARLONG.decode(VARLONG.encode(n)) == n


@given(st.uuids())
def test_uuid_round_trips(u: uuid.UUID) -> None:
    assert UUID.decode(UUID.encode(u)) == u


@given(st.booleans())
def test_bool_round_trips(b: bool) -> None:
    assert BOOL.decode(BOOL.encode(b)) is b


@given(st.text())
def test_text_round_trips(s: str) -> None:
    try:
        data = TEXT.encode(s)
    except ValueError:  # lone surrogates
        return
    assert TEXT.decode(data) == s
    assert TEXT_LENIENT.decode(data) == s


@given(JSON_DATA)
def test_json_round_trips(value: JsonValue) -> None:
    assert JSON.decode(JSON.encode(value)) == value


@given(st.binary(max_size=40))
def test_decoders_only_raise_decode_error(data: bytes) -> None:
    for codec in ALL_CODECS:
        with contextlib.suppress(DecodeError):
            codec.decode(data)


@given(st.binary(max_size=40))
def test_lenient_text_never_fails(data: bytes) -> None:
    assert isinstance(TEXT_LENIENT.decode(data), str)


# -- through Headers -----------------------------------------------------------------------


def test_headers_add_value_last_value_values_and_set_value() -> None:
    h = Headers()
    assert h.add_value("n", 1, LONG) is h
    h.add_value("n", 2, LONG).add("n", None).add_value("ok", True, BOOL)
    assert h.last_value("n", LONG) is None  # the null header is the last one
    assert h.values("n", LONG) == [1, 2, None]
    assert h.values("n") == [LONG.encode(1), LONG.encode(2), None]
    assert h.last_value("ok", BOOL) is True
    assert h.last_value("missing", BOOL) is None
    h.set_value("n", 7, LONG)
    assert h.values("n", LONG) == [7]
    assert list(h) == [("n", LONG.encode(7)), ("ok", b"\x01")]


def test_typed_values_survive_the_wire_form() -> None:
    u = uuid.uuid4()
    h = Headers().add_value("id", u, UUID).add_value("meta", {"a": [1]}, JSON)
    back = Headers.from_bytes(h.to_bytes())
    assert back.last_value("id", UUID) == u
    assert back.last_value("meta", JSON) == {"a": [1]}


def test_last_value_with_a_codec_raises_decode_error_on_bad_bytes() -> None:
    h = Headers([("n", b"abc")])
    with pytest.raises(DecodeError):
        h.last_value("n", LONG)
    with pytest.raises(DecodeError):
        h.values("n", LONG)


def test_typed_adds_after_close_raise_read_only() -> None:
    h = Headers().close()
    with pytest.raises(ReadOnlyHeadersError):
        h.add_value("n", 1, LONG)
    with pytest.raises(ReadOnlyHeadersError):
        h.set_value("n", 1, LONG)
