"""kheaders.wire: varints, KIP-482 compact types and tagged fields, the header section."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import DecodeError, Headers
from kheaders.wire import (
    read_compact_array,
    read_compact_bytes,
    read_compact_string,
    read_headers,
    read_tagged_fields,
    read_unsigned_varint,
    read_varint,
    read_varlong,
    varint_size,
    write_compact_array,
    write_compact_bytes,
    write_compact_string,
    write_headers,
    write_tagged_fields,
    write_unsigned_varint,
    write_varint,
    write_varlong,
)

I32 = st.integers(-(2**31), 2**31 - 1)
I64 = st.integers(-(2**63), 2**63 - 1)
U32 = st.integers(0, 2**32 - 1)

# Kafka's ByteUtilsTest vectors (Java ints; unsigned ones are the same bits read as unsigned).
UNSIGNED_VARINTS = [
    (0, "00"),
    (1, "01"),
    (63, "3f"),
    (64, "40"),
    (300, "ac 02"),
    (8191, "ff 3f"),
    (8192, "80 40"),
    (1048575, "ff ff 3f"),
    (1048576, "80 80 40"),
    (2**31 - 1, "ff ff ff ff 07"),
    (2**32 - 64, "c0 ff ff ff 0f"),  # Java -64
    (2**31, "80 80 80 80 08"),  # Java Integer.MIN_VALUE
    (2**32 - 1, "ff ff ff ff 0f"),  # Java -1
]
VARINTS = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (63, "7e"),
    (-64, "7f"),
    (64, "80 01"),
    (-65, "81 01"),
    (8191, "fe 7f"),
    (-8192, "ff 7f"),
    (8192, "80 80 01"),
    (-8193, "81 80 01"),
    (1048575, "fe ff 7f"),
    (-1048576, "ff ff 7f"),
    (1048576, "80 80 80 01"),
    (-1048577, "81 80 80 01"),
    (134217727, "fe ff ff 7f"),
    (-134217728, "ff ff ff 7f"),
    (134217728, "80 80 80 80 01"),
    (-134217729, "81 80 80 80 01"),
    (2**31 - 1, "fe ff ff ff 0f"),
    (-(2**31), "ff ff ff ff 0f"),
]
VARLONGS = [
    *VARINTS,
    (2**31, "80 80 80 80 10"),
    (2**63 - 1, "fe ff ff ff ff ff ff ff ff 01"),
    (-(2**63), "ff ff ff ff ff ff ff ff ff 01"),
]


# -- varints ------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "hexed"), UNSIGNED_VARINTS)
def test_unsigned_varint_matches_kafka_byte_utils(value: int, hexed: str) -> None:
    assert write_unsigned_varint(value) == bytes.fromhex(hexed)
    assert read_unsigned_varint(bytes.fromhex(hexed)) == (value, len(bytes.fromhex(hexed)))


@pytest.mark.parametrize(("value", "hexed"), VARINTS)
def test_varint_matches_kafka_byte_utils(value: int, hexed: str) -> None:
    assert write_varint(value) == bytes.fromhex(hexed)
    assert read_varint(bytes.fromhex(hexed)) == (value, len(bytes.fromhex(hexed)))
    assert varint_size(value) == len(bytes.fromhex(hexed))


@pytest.mark.parametrize(("value", "hexed"), VARLONGS)
def test_varlong_matches_kafka_byte_utils(value: int, hexed: str) -> None:
    assert write_varlong(value) == bytes.fromhex(hexed)
    assert read_varlong(bytes.fromhex(hexed)) == (value, len(bytes.fromhex(hexed)))


@pytest.mark.parametrize(
    ("write", "bad"),
    [
        (write_unsigned_varint, -1),
        (write_unsigned_varint, 2**32),
        (write_varint, 2**31),
        (write_varint, -(2**31) - 1),
        (write_varlong, 2**63),
        (write_varlong, -(2**63) - 1),
    ],
)
def test_writers_reject_out_of_range_values_with_value_error(write: object, bad: int) -> None:
    with pytest.raises(ValueError, match="range"):
        write(bad)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("read", "hexed"),
    [
        (read_varint, "ff ff ff ff ff 01"),  # 5th byte has the high bit: over-long
        (read_unsigned_varint, "80 80 80 80 80 00"),
        (read_varint, "ff ff ff ff 1f"),  # 5 bytes but more than 32 bits
        (read_unsigned_varint, "ff ff ff ff 7f"),
        (read_varlong, "ff ff ff ff ff ff ff ff ff ff 01"),  # 10th byte has the high bit
        (read_varlong, "ff ff ff ff ff ff ff ff ff 7f"),  # more than 64 bits
    ],
)
def test_over_long_or_oversize_varints_raise_decode_error(read: object, hexed: str) -> None:
    with pytest.raises(DecodeError) as info:
        read(bytes.fromhex(hexed))  # type: ignore[operator]
    assert info.value.offset == 0


@pytest.mark.parametrize("read", [read_unsigned_varint, read_varint, read_varlong])
def test_truncated_varints_raise_decode_error_with_offset(read: object) -> None:
    with pytest.raises(DecodeError) as info:
        read(b"\x00\x80\x80", 1)  # type: ignore[operator]
    assert info.value.offset == 1
    with pytest.raises(DecodeError):
        read(b"", 0)  # type: ignore[operator]


@pytest.mark.parametrize("read", [read_varint, read_unsigned_varint, read_varlong])
def test_negative_offset_is_a_decode_error_not_a_read_from_the_end(read: object) -> None:
    for offset in (-1, -2):  # a one-byte value sits there: no fast path may read it
        with pytest.raises(DecodeError, match="negative offset"):
            read(b"\x02\x02", offset)  # type: ignore[operator]
    with pytest.raises(DecodeError, match="truncated"):
        read(b"\x02\x02", 2)  # type: ignore[operator]


def test_readers_start_at_the_offset_and_return_the_next_one() -> None:
    data = b"\xff" + write_varint(-300) + write_varlong(2**40)
    value, pos = read_varint(data, 1)
    assert value == -300
    assert read_varlong(data, pos) == (2**40, len(data))


@given(U32)
def test_unsigned_varint_round_trips(n: int) -> None:
    data = write_unsigned_varint(n)
    assert read_unsigned_varint(data) == (n, len(data))


@given(I32)
def test_varint_round_trips_and_size_is_exact(n: int) -> None:
    data = write_varint(n)
    assert read_varint(data) == (n, len(data))
    assert varint_size(n) == len(data)


@given(I64)
def test_varlong_round_trips(n: int) -> None:
    data = bytearray(write_varlong(n))
    assert read_varlong(memoryview(data)) == (n, len(data))


@given(st.binary(max_size=12), st.integers(0, 12))
def test_varint_readers_only_raise_decode_error(data: bytes, offset: int) -> None:
    for read in (read_unsigned_varint, read_varint, read_varlong):
        try:
            _, pos = read(data, offset)
        except DecodeError:
            continue
        assert offset < pos <= len(data)


# -- compact types --------------------------------------------------------------------------


def test_compact_string_and_bytes_are_length_plus_one_with_zero_for_null() -> None:
    assert write_compact_string(None) == b"\x00"
    assert write_compact_string("") == b"\x01"
    assert write_compact_string("abc") == b"\x04abc"
    assert write_compact_bytes(b"\x00" * 200)[:2] == write_unsigned_varint(201)
    assert read_compact_string(b"\x00") == (None, 1)
    assert read_compact_string(b"\x01") == ("", 1)
    assert read_compact_bytes(b"\x00") == (None, 1)
    assert read_compact_bytes(bytearray(b"\x01")) == (b"", 1)


def test_compact_array_writes_count_plus_one_then_items() -> None:
    data = write_compact_array(["a", "bc"], write_compact_string)
    assert data.hex(" ") == "03 02 61 03 62 63"
    assert read_compact_array(data, 0, read_compact_string) == (["a", "bc"], 6)
    assert read_compact_array(b"\x00", 0, read_compact_string) == (None, 1)
    assert read_compact_array(b"\x01", 0, read_compact_string) == ([], 1)


def test_huge_declared_length_on_ten_bytes_fails_fast() -> None:
    for declared in (2**31 - 2, 2**31):
        lying = write_unsigned_varint(declared + 1) + bytes(10)
        for read in (read_compact_bytes, read_compact_string):
            with pytest.raises(DecodeError, match=r"past the end|exceeds"):
                read(lying)
        with pytest.raises(DecodeError, match=r"items but only|exceeds"):
            read_compact_array(lying, 0, read_compact_string)
    with pytest.raises(DecodeError, match="exceeds"):
        read_tagged_fields(write_unsigned_varint(2**31) + bytes(10))
    with pytest.raises(DecodeError, match="exceeds"):
        Headers.from_bytes(write_varint(2**30) + bytes(10))
    with pytest.raises(DecodeError, match=r"header key length .* runs past the end"):
        Headers.from_bytes(b"\x02" + write_varint(2**31 - 1) + bytes(10))


def test_compact_lengths_beyond_java_int_are_rejected() -> None:
    with pytest.raises(DecodeError, match="exceeds"):
        read_compact_bytes(write_unsigned_varint(2**32 - 1) + bytes(4))


def test_compact_string_that_is_not_utf8_is_a_decode_error_at_the_bad_byte() -> None:
    with pytest.raises(DecodeError) as info:
        read_compact_string(b"\x04a\xffb")
    assert info.value.offset == 2


def test_compact_writers_reject_wrong_types() -> None:
    with pytest.raises(TypeError):
        write_compact_string(b"x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        write_compact_bytes("x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="UTF-8"):
        write_compact_string("\ud800")


def test_compact_array_turns_item_reader_errors_into_decode_errors() -> None:
    def bad_item(data: object, pos: int) -> tuple[int, int]:
        raise IndexError("boom")

    with pytest.raises(DecodeError, match="item 0"):
        read_compact_array(b"\x02\x00", 0, bad_item)


@given(st.one_of(st.none(), st.text()))
def test_compact_string_round_trips(value: str | None) -> None:
    try:
        data = write_compact_string(value)
    except ValueError:  # lone surrogates are not UTF-8
        return
    assert read_compact_string(b"\x07" + data, 1) == (value, len(data) + 1)


@given(st.one_of(st.none(), st.binary()))
def test_compact_bytes_round_trips(value: bytes | None) -> None:
    data = write_compact_bytes(value)
    assert read_compact_bytes(data) == (value, len(data))


@given(st.one_of(st.none(), st.lists(I64)))
def test_compact_array_round_trips(value: list[int] | None) -> None:
    data = write_compact_array(value, write_varlong)
    assert read_compact_array(data, 0, read_varlong) == (value, len(data))


@given(st.binary(max_size=40))
def test_compact_readers_only_raise_decode_error(data: bytes) -> None:
    for read in (
        read_compact_bytes,
        read_compact_string,
        lambda d: read_compact_array(d, 0, read_compact_string),
        lambda d: read_compact_array(d, 0, read_varint),
    ):
        with contextlib.suppress(DecodeError):
            read(data)


# -- tagged fields --------------------------------------------------------------------------


def test_tagged_fields_are_count_then_ascending_tag_size_data() -> None:
    assert write_tagged_fields({}) == b"\x00"
    data = write_tagged_fields({300: b"x", 1: b""})
    assert data.hex(" ") == "02 01 00 ac 02 01 78"
    assert read_tagged_fields(data) == ({1: b"", 300: b"x"}, len(data))
    assert read_tagged_fields(b"\xaa\x00", 1) == ({}, 2)


@pytest.mark.parametrize(
    ("hexed", "message", "offset"),
    [
        ("02 01 00 00 00", "out of ascending order", 3),
        ("02 01 00 01 00", "repeated", 3),
        ("01 00 05 61", "runs past the end", 2),
        ("05 00 00", "count", 0),
        ("01 00 80", "truncated", 2),
        ("01 80 00", "truncated", 3),  # a two-byte tag leaves no byte for the size
        ("02 00 01 61 01 80", "truncated", 5),
        ("01 ff ff ff ff 0f 00", "exceeds", 1),
        ("", "truncated", 0),
    ],
)
def test_malformed_tagged_sections_raise_decode_error_with_offset(
    hexed: str, message: str, offset: int
) -> None:
    data = bytes.fromhex(hexed)
    with pytest.raises(DecodeError, match=message) as info:
        read_tagged_fields(data)
    assert info.value.offset == offset


def test_tagged_writer_rejects_bad_tags() -> None:
    with pytest.raises(ValueError, match="tag"):
        write_tagged_fields({-1: b""})
    with pytest.raises(ValueError, match="tag"):
        write_tagged_fields({2**31: b""})
    with pytest.raises(TypeError):
        write_tagged_fields({True: b""})
    with pytest.raises(TypeError):
        write_tagged_fields({0: "text"})  # type: ignore[dict-item]


@given(st.dictionaries(st.integers(0, 2**31 - 1), st.binary(max_size=20), max_size=8))
def test_tagged_fields_round_trip(fields: dict[int, bytes]) -> None:
    data = write_tagged_fields(fields)
    decoded, pos = read_tagged_fields(data)
    assert decoded == fields
    assert list(decoded) == sorted(fields)
    assert pos == len(data)


@given(st.binary(max_size=40))
def test_tagged_reader_only_raises_decode_error(data: bytes) -> None:
    try:
        fields, pos = read_tagged_fields(data)
    except DecodeError:
        return
    assert pos <= len(data)
    assert list(fields) == sorted(fields)


# -- header section -------------------------------------------------------------------------


def test_header_section_helpers_match_kafka_and_allow_trailing_bytes() -> None:
    data = write_headers([("foo", b"value"), ("bar", None)])
    assert data.hex(" ") == "04 06 66 6f 6f 0a 76 61 6c 75 65 06 62 61 72 01"
    headers, pos = read_headers(b"\x09" + data + b"rest", 1)
    assert headers == Headers([("foo", b"value"), ("bar", None)])
    assert pos == len(data) + 1
    assert not headers.read_only


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # kafka-python's own imports
@given(I64)
def test_varlong_matches_kafka_python(n: int) -> None:
    from kafka.record.util import decode_varint, encode_varint

    theirs = bytearray()
    encode_varint(n, theirs.append)
    assert write_varlong(n) == bytes(theirs)
    assert read_varlong(bytes(theirs)) == decode_varint(bytes(theirs), 0)
