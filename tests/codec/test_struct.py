"""Tagged structs: evolvable header values (KIP-482 tagged fields applied to headers)."""

from __future__ import annotations

import contextlib
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import DecodeError, Headers
from kheaders.values import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    JSON,
    LONG,
    NULLABLE_BYTES,
    NULLABLE_STRING,
    STRING,
    UUID,
    UVARINT,
    VARINT,
    VARLONG,
    TaggedStruct,
    array,
    field,
    nullable_array,
    struct_type,
    tagged,
)
from kheaders.wire import read_tagged_fields, write_compact_string, write_tagged_fields


# The same struct as three generations of a service would declare it.
class AuditV0(TaggedStruct):
    user = field(STRING)
    region = tagged(0, STRING, default=None)


class AuditV0Plus(TaggedStruct):
    """V0 plus two tagged fields: no version bump needed."""

    user = field(STRING)
    region = tagged(0, STRING, default=None)
    trace = tagged(1, UUID)
    hops = tagged(2, INT32, default=0)


class AuditV1(TaggedStruct, version=1):
    """A new required field needs a version and a default for older bytes."""

    user = field(STRING)
    tenant = field(STRING, since=1, default="")
    region = tagged(0, STRING, default=None)
    trace = tagged(1, UUID)
    hops = tagged(2, INT32, default=0)


class Everything(TaggedStruct, version=2):
    i8 = field(INT8)
    i16 = field(INT16)
    i32 = field(INT32)
    i64 = field(INT64)
    long = field(LONG)
    uv = field(UVARINT)
    v = field(VARINT)
    vl = field(VARLONG)
    flag = field(BOOL)
    f = field(FLOAT64)
    s = field(STRING)
    ns = field(NULLABLE_STRING)
    b = field(BYTES)
    nb = field(NULLABLE_BYTES)
    u = field(UUID)
    names = field(array(STRING))
    grid = field(array(array(INT16)))
    maybe = field(nullable_array(VARINT), since=2, default=None)
    note = tagged(5, NULLABLE_STRING, default="n/a")
    extra = tagged(9, array(UUID), default=[])


EVERYTHING = st.builds(
    Everything,
    i8=st.integers(-128, 127),
    i16=st.integers(-(2**15), 2**15 - 1),
    i32=st.integers(-(2**31), 2**31 - 1),
    i64=st.integers(-(2**63), 2**63 - 1),
    long=st.integers(-(2**63), 2**63 - 1),
    uv=st.integers(0, 2**32 - 1),
    v=st.integers(-(2**31), 2**31 - 1),
    vl=st.integers(-(2**63), 2**63 - 1),
    flag=st.booleans(),
    f=st.floats(allow_nan=False),
    s=st.text(alphabet=st.characters(exclude_categories=("Cs",))),
    ns=st.none() | st.text(alphabet=st.characters(exclude_categories=("Cs",))),
    b=st.binary(),
    nb=st.none() | st.binary(),
    u=st.uuids(),
    names=st.lists(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=5)),
    grid=st.lists(st.lists(st.integers(-(2**15), 2**15 - 1), max_size=3), max_size=3),
    maybe=st.none() | st.lists(st.integers(-(2**31), 2**31 - 1), max_size=3),
    note=st.none() | st.just("n/a") | st.text(max_size=3).filter(str.isascii),
    extra=st.lists(st.uuids(), max_size=2),
)


# -- layout --------------------------------------------------------------------------------


def test_layout_is_version_required_fields_then_tagged_section() -> None:
    data = AuditV0(user="ann").to_bytes()
    assert data == b"\x00" + write_compact_string("ann") + b"\x00"
    data = AuditV0(user="ann", region="eu").to_bytes()
    assert data == b"\x00" + write_compact_string("ann") + write_tagged_fields(
        {0: write_compact_string("eu")}
    )


def test_tagged_fields_at_their_default_take_no_space() -> None:
    plain = AuditV0Plus(user="ann").to_bytes()
    assert plain == AuditV0(user="ann").to_bytes()
    assert len(AuditV0Plus(user="ann", hops=1).to_bytes()) == len(plain) + 6


def test_defaults_missing_fields_and_unknown_names() -> None:
    a = AuditV0Plus(user="ann")
    assert (a.region, a.trace, a.hops) == (None, None, 0)
    with pytest.raises(TypeError, match="missing required field 'user'"):
        AuditV0()
    with pytest.raises(TypeError, match="unknown fields"):
        AuditV0(user="a", nope=1)


def test_list_defaults_are_not_shared() -> None:
    a, b = Everything.__new__(Everything), Everything.__new__(Everything)
    Everything.__init__(a, **_minimal())
    Everything.__init__(b, **_minimal())
    a.extra.append(uuid.uuid4())
    assert b.extra == []


# -- compatibility -------------------------------------------------------------------------


def test_old_reader_keeps_new_tags_and_writes_them_back() -> None:
    new = AuditV0Plus(user="ann", region="eu", trace=uuid.UUID(int=7), hops=3)
    old = AuditV0.from_bytes(new.to_bytes())
    assert (old.user, old.region) == ("ann", "eu")
    assert set(old.unknown_tags) == {1, 2}
    old.region = "us"  # a middle service edits what it knows
    again = AuditV0Plus.from_bytes(old.to_bytes())
    assert again == AuditV0Plus(user="ann", region="us", trace=uuid.UUID(int=7), hops=3)


def test_new_reader_fills_defaults_for_old_bytes() -> None:
    new = AuditV1.from_bytes(AuditV0(user="bob").to_bytes())
    assert new == AuditV1(user="bob")
    assert (new.tenant, new.trace, new.hops, new.wire_version) == ("", None, 0, 0)


def test_reencoding_keeps_the_version_it_was_read_in() -> None:
    new = AuditV1.from_bytes(AuditV0(user="bob", region="eu").to_bytes())
    new.hops = 2
    assert AuditV0.from_bytes(new.to_bytes()).user == "bob"
    with pytest.raises(ValueError, match="tenant is not in version 0"):
        AuditV1(user="bob", tenant="acme").to_bytes(version=0)


def test_old_reader_refuses_a_newer_version_clearly() -> None:
    data = AuditV1(user="ann", tenant="acme").to_bytes()
    with pytest.raises(DecodeError, match="version 1; this reader knows up to 0") as info:
        AuditV0.from_bytes(data)
    assert info.value.offset == 0
    assert AuditV0.from_bytes(AuditV1(user="ann").to_bytes(version=0)).user == "ann"


def test_unknown_tags_merge_in_ascending_order_with_known_ones() -> None:
    data = b"\x00" + write_compact_string("a") + write_tagged_fields({1: b"x", 0: b"\x03eu"})
    old = AuditV0.from_bytes(data)
    assert old.unknown_tags == {1: b"x"}
    fields, _ = read_tagged_fields(old.to_bytes(), 3)
    assert list(fields) == [0, 1]


# -- through Headers -----------------------------------------------------------------------


def test_struct_round_trips_through_headers_and_their_bytes() -> None:
    audit = AuditV1(user="ann", tenant="t", trace=uuid.UUID(int=1))
    h = Headers().add_value("audit", audit, AuditV1.codec)
    back = Headers.from_bytes(h.to_bytes())
    assert back.last_value("audit", AuditV1.codec) == audit
    assert AuditV1.codec.name == "struct:AuditV1"
    with pytest.raises(TypeError):
        AuditV1.codec.encode(AuditV0(user="x"))  # type: ignore[arg-type]


def test_field_types_are_value_codecs_too() -> None:
    h = Headers().add_value("n", 5, INT32).add_value("s", "x", STRING)
    assert h.last_value("n", INT32) == 5
    assert h.last_value("s", STRING) == "x"
    with pytest.raises(DecodeError, match="left after"):
        INT32.decode(bytes(5))


def test_nested_structs_carry_their_own_version() -> None:
    class Envelope(TaggedStruct):
        audits = field(array(struct_type(AuditV0)))

    env = Envelope(audits=[AuditV0(user="a"), AuditV0(user="b", region="eu")])
    assert Envelope.from_bytes(env.to_bytes()) == env


# -- rejects -------------------------------------------------------------------------------


def test_bad_values_raise_naming_the_field() -> None:
    with pytest.raises(TypeError, match=r"AuditV0\.user"):
        AuditV0(user=5).to_bytes()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"AuditV0Plus\.hops"):
        AuditV0Plus(user="a", hops=2**31).to_bytes()
    with pytest.raises(TypeError, match="must not be None"):
        AuditV0(user=None).to_bytes()  # type: ignore[arg-type]


def test_bad_declarations_fail_at_class_creation() -> None:
    with pytest.raises(TypeError, match="tag 0 used by both"):

        class Clash(TaggedStruct):
            a = tagged(0, STRING)
            b = tagged(0, INT32)

    with pytest.raises(TypeError, match="needs a default"):

        class Late(TaggedStruct, version=1):
            a = field(STRING, since=1)

    with pytest.raises(TypeError, match="above the class version"):

        class Future(TaggedStruct):
            a = field(STRING, since=1, default="")

    with pytest.raises(TypeError, match="reserved"):

        class Shadow(TaggedStruct):
            to_bytes = field(STRING)

    with pytest.raises(TypeError, match="wire type"):
        field(JSON)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tag"):
        tagged(-1, STRING)


@pytest.mark.parametrize(
    ("hexed", "match"),
    [
        ("", "truncated"),
        ("00", "truncated"),
        ("00 00 00", "null where a non-null string"),
        ("00 02 61", "truncated"),
        ("00 02 61 00 ff", "bytes left after"),
        ("00 02 61 01 00 02 02 ff", "not UTF-8"),
        ("00 02 61 01 02 05 00 00 00 00 00", "bytes left over"),
        ("00 02 61 02 01 00 01 00", "repeated"),
        ("05 02 61 00", "version 5"),
    ],
)
def test_malformed_bytes_raise_decode_error(hexed: str, match: str) -> None:
    with pytest.raises(DecodeError, match=match):
        AuditV0Plus.from_bytes(bytes.fromhex(hexed))


# -- properties ----------------------------------------------------------------------------


def _minimal() -> dict[str, object]:
    return {
        "i8": 0,
        "i16": 0,
        "i32": 0,
        "i64": 0,
        "long": 0,
        "uv": 0,
        "v": 0,
        "vl": 0,
        "flag": False,
        "f": 0.0,
        "s": "",
        "ns": None,
        "b": b"",
        "nb": None,
        "u": uuid.UUID(int=0),
        "names": [],
        "grid": [],
    }


@given(EVERYTHING)
def test_every_field_type_round_trips(value: Everything) -> None:
    data = value.to_bytes()
    assert Everything.from_bytes(data) == value
    assert Everything.codec.decode(Everything.codec.encode(value)) == value


@given(EVERYTHING)
def test_older_version_bytes_decode_with_defaults(value: Everything) -> None:
    value.maybe = None
    back = Everything.from_bytes(value.to_bytes(version=1))
    assert back == value
    assert back.wire_version == 1


@given(st.binary(max_size=60))
def test_decoding_random_bytes_only_raises_decode_error(data: bytes) -> None:
    for cls in (AuditV0, AuditV0Plus, AuditV1, Everything):
        with contextlib.suppress(DecodeError):
            cls.from_bytes(data)


@given(EVERYTHING, st.integers(0, 200), st.integers(0, 255))
def test_corrupted_bytes_only_raise_decode_error(value: Everything, at: int, byte: int) -> None:
    data = bytearray(value.to_bytes())
    data[at % len(data)] = byte
    with contextlib.suppress(DecodeError):
        Everything.from_bytes(bytes(data))
