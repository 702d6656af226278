"""DecodeError.offset is absolute in the buffer the caller passed, at any nesting depth.

Tagged fields and nested structs are decoded out of their own bytes; an error inside them used
to count from the start of those bytes (the issue's example reported byte 0 for a bad int32 at
byte 8).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import DecodeError
from kheaders.values import INT32, STRING, TaggedStruct, array, field, struct_type, tagged
from kheaders.wire import write_compact_bytes, write_unsigned_varint


class Inner(TaggedStruct):
    name = field(STRING)
    count = tagged(0, INT32, default=0)


class Outer(TaggedStruct):
    label = field(STRING)
    inner = field(struct_type(Inner))
    more = tagged(1, array(struct_type(Inner)), default=[])
    nested = tagged(2, struct_type(Inner), default=None)


# version 0, name "abc", one tagged field: tag 0, 2 bytes, "00 05" (an int32 needs 4)
BAD_INNER = bytes.fromhex("00 04 61 62 63 01 00 02 00 05")
BAD_AT = 8


def _offset(decode: object, data: bytes) -> int | None:
    with pytest.raises(DecodeError) as caught:
        decode(data)  # type: ignore[operator]
    return caught.value.offset


def test_the_issue_example_names_byte_8() -> None:
    assert _offset(Inner.from_bytes, BAD_INNER) == BAD_AT


def test_a_nested_struct_names_its_bytes_position_in_the_outer_buffer() -> None:
    prefix = b"\x00" + b"\x02z"  # version 0, label "z"
    data = prefix + write_compact_bytes(BAD_INNER) + b"\x00"
    start = len(prefix) + 1  # the inner struct's bytes follow a one-byte length
    assert _offset(Outer.from_bytes, data) == start + BAD_AT


def test_a_struct_in_a_tagged_field_and_in_an_array_in_a_tagged_field() -> None:
    good_inner = write_compact_bytes(Inner(name="ok").to_bytes())
    head = b"\x00" + b"\x02z" + good_inner
    as_tag_2 = write_compact_bytes(BAD_INNER)
    data = head + b"\x01" + b"\x02" + write_unsigned_varint(len(as_tag_2)) + as_tag_2
    field_start = len(data) - len(as_tag_2)
    assert _offset(Outer.from_bytes, data) == field_start + 1 + BAD_AT
    items = b"\x02" + write_compact_bytes(BAD_INNER)  # an array of one Inner
    data = head + b"\x01" + b"\x01" + write_unsigned_varint(len(items)) + items
    field_start = len(data) - len(items)
    assert _offset(Outer.from_bytes, data) == field_start + 2 + BAD_AT


def test_bytes_left_over_in_a_tagged_field_name_where_they_start() -> None:
    # tag 0 holds 6 bytes: an int32 and two more
    data = bytes.fromhex("00 04 61 62 63 01 00 06 00 00 00 05 ff ff")
    assert _offset(Inner.from_bytes, data) == 12


@given(
    pad=st.binary(max_size=20),
    body=st.binary(min_size=1, max_size=40),
)
def test_decoding_at_an_offset_shifts_the_error_offset_by_as_much(pad: bytes, body: bytes) -> None:
    alone: int | None = -1
    try:
        Outer.read(body, 0)
    except DecodeError as exc:
        alone = exc.offset
    if alone == -1:
        return  # decoded: nothing to compare
    with pytest.raises(DecodeError) as shifted:
        Outer.read(pad + body, len(pad))
    assert alone is not None
    assert 0 <= alone <= len(body)
    assert shifted.value.offset == len(pad) + alone
