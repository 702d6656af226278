"""W3C Trace Context parsing: the invalid-input table, tracestate limits, header rules."""

from __future__ import annotations

from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import Headers
from kheaders.tracecontext import (
    TraceParent,
    extract_trace_parent,
    extract_trace_state,
    format_tracestate,
    parse_traceparent,
    parse_tracestate,
)
from tests.support.cores import CORES, core, is_compiled

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"
VALID = f"00-{TRACE}-{SPAN}-01"


def test_valid_traceparent_parses_into_integer_ids() -> None:
    tp = parse_traceparent(VALID)
    assert tp == TraceParent(0, int(TRACE, 16), int(SPAN, 16), 1)
    assert tp is not None
    assert tp.trace_id_hex == TRACE
    assert tp.parent_id_hex == SPAN
    assert tp.sampled
    assert tp.header() == VALID


def test_bytes_and_str_give_the_same_result() -> None:
    assert parse_traceparent(VALID.encode()) == parse_traceparent(VALID)


def test_unsampled_flags_are_kept() -> None:
    tp = parse_traceparent(f"00-{TRACE}-{SPAN}-00")
    assert tp is not None
    assert not tp.sampled


def test_surrounding_optional_white_space_is_ignored() -> None:
    assert parse_traceparent(f" \t{VALID} ") == parse_traceparent(VALID)


def test_higher_version_may_carry_dash_prefixed_trailing_data() -> None:
    tp = parse_traceparent(f"cc-{TRACE}-{SPAN}-01-what-the-future-holds")
    assert tp is not None
    assert tp.version == 0xCC
    assert tp.parent_id == int(SPAN, 16)


def test_higher_version_with_exact_length_is_valid() -> None:
    assert parse_traceparent(f"01-{TRACE}-{SPAN}-09") is not None


INVALID: list[bytes | str | None] = [
    None,
    "",
    "garbage",
    VALID.upper(),
    f"00-{TRACE.upper()}-{SPAN}-01",
    f"00-{TRACE}-{SPAN.upper()}-01",
    f"00-{TRACE}-{SPAN}-0A",
    f"ff-{TRACE}-{SPAN}-01",
    f"00-{'0' * 32}-{SPAN}-01",
    f"00-{TRACE}-{'0' * 16}-01",
    f"00-{TRACE}-{SPAN}-01-extra",
    f"00-{TRACE}-{SPAN}-01-",
    f"00-{TRACE}-{SPAN}-011",
    f"cc-{TRACE}-{SPAN}-01.extra",
    f"00-{TRACE[:-1]}-{SPAN}-01",
    f"00-{TRACE}0-{SPAN}-01",
    f"00-{TRACE}-{SPAN[:-1]}-01",
    f"00-{TRACE}-{SPAN}-1",
    f"0-{TRACE}-{SPAN}-01",
    f"00_{TRACE}_{SPAN}_01",
    f"00-{TRACE}-{SPAN}_01",
    f"0g-{TRACE}-{SPAN}-01",
    f"00-{TRACE[:-1]}g-{SPAN}-01",
    f"00-{TRACE}-{SPAN[:-1]}x-01",
    f"00-{TRACE}-{SPAN}-0x",
    f"00-{TRACE[:10]}-{TRACE[10:]}-{SPAN}-01",
    f"00-{TRACE}-{SPAN}-01\x00",
    "00-" + "é" * 32 + f"-{SPAN}-01",
    (VALID + " ").encode() + b"\xff",
    b"\xff" * 55,
]
"""Invalid ``traceparent`` values (str ones are tried as UTF-8 bytes too)."""


@pytest.fixture(scope="module", params=CORES)
def tpm(request: pytest.FixtureRequest) -> ModuleType:
    """The traceparent module of each core: the one installed (compiled where built) and
    its Python source."""
    return core(request.param, "kheaders._model.traceparent")


@pytest.mark.parametrize("value", INVALID)
def test_invalid_traceparent_gives_none(tpm: ModuleType, value: bytes | str | None) -> None:
    assert tpm.parse_traceparent(value) is None
    if isinstance(value, str):  # as received: bytes (the 55-byte ones take the fast path)
        assert tpm.parse_traceparent(value.encode()) is None
        assert tpm.parse_traceparent(value.encode()) is None  # and again: nothing was cached


_HEXISH = "0123456789abcdefABF-xg \t\x00\u00e9"


@given(
    st.lists(st.tuples(st.integers(0, 54), st.sampled_from(_HEXISH)), max_size=3),
    st.sampled_from([VALID, f"ff-{TRACE}-{SPAN}-01", f"cc-{TRACE}-{SPAN}-00"]),
)
def test_the_55_byte_fast_path_is_exactly_as_strict_as_the_text_path(
    tpm: ModuleType, edits: list[tuple[int, str]], base: str
) -> None:
    """Any value near a valid one, as bytes (fast path, cache) and as text (regex path)."""
    chars = list(base)
    for i, c in edits:
        chars[i] = c
    text = "".join(chars)
    data = text.encode()
    expected = tpm.parse_traceparent(text)
    assert tpm.parse_traceparent(data) == expected
    assert tpm.parse_traceparent(data) == expected  # a second time: from the cache when valid
    assert tpm.extract_trace_parent(Headers([("traceparent", data)])) == expected


def test_repeated_values_are_parsed_once_and_the_cache_stays_bounded(tpm: ModuleType) -> None:
    """The pure-Python core remembers valid values; the compiled core parses each (in about
    what a lookup costs) and remembers none."""
    first = tpm.parse_traceparent(VALID.encode())
    assert first is not None
    again = tpm.parse_traceparent(VALID.encode())  # equal bytes, another object
    extracted = tpm.extract_trace_parent(Headers([("traceparent", VALID.encode())]))
    assert again == first == extracted
    if is_compiled(tpm):
        assert again is not first
        assert not tpm._cache
    else:
        assert again is first  # a hit
        assert extracted is first
    for i in range(1, 3 * tpm._CACHE_SIZE):
        tp = tpm.parse_traceparent(b"00-%032x-%016x-01" % (i, i))
        assert tp is not None
        assert (tp.trace_id, tp.parent_id) == (i, i)
        assert len(tpm._cache) <= tpm._CACHE_SIZE


def test_invalid_values_are_never_remembered(tpm: ModuleType) -> None:
    bad = [f"ff-{TRACE}-{SPAN}-01", f"00-{'0' * 32}-{SPAN}-01", VALID.upper()]
    for value in bad:
        assert tpm.parse_traceparent(value.encode()) is None
        assert value.encode() not in tpm._cache


@given(st.one_of(st.binary(max_size=80), st.text(max_size=80)))
def test_parse_traceparent_never_raises(value: bytes | str) -> None:
    result = parse_traceparent(value)
    assert result is None or isinstance(result, TraceParent)


@given(st.one_of(st.binary(max_size=600), st.text(max_size=600)))
def test_parse_tracestate_never_raises(value: bytes | str) -> None:
    members = parse_tracestate(value)
    assert len(members) <= 32
    assert len(format_tracestate(members)) <= 512


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["traceparent", "tracestate", "x"]),
            st.one_of(st.none(), st.binary(max_size=70)),
        ),
        max_size=5,
    )
)
def test_extract_never_raises_on_random_headers(pairs: list[tuple[str, bytes | None]]) -> None:
    headers = Headers(pairs)
    extract_trace_parent(headers)
    extract_trace_state(headers)


@given(st.integers(1, 2**128 - 1), st.integers(1, 2**64 - 1), st.integers(0, 255))
def test_header_round_trips(trace_id: int, span_id: int, flags: int) -> None:
    tp = TraceParent(0, trace_id, span_id, flags)
    assert parse_traceparent(tp.header()) == tp


def test_tracestate_keeps_valid_members_in_order() -> None:
    assert parse_tracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE") == [
        ("rojo", "00f067aa0ba902b7"),
        ("congo", "t61rcWkgMzE"),
    ]


def test_tracestate_accepts_multi_tenant_keys_and_skips_empty_members() -> None:
    assert parse_tracestate("t1@vendor=v, ,\t,a=b") == [("t1@vendor", "v"), ("a", "b")]


@pytest.mark.parametrize(
    "member",
    ["Upper=x", "1abc=x", "a=", "a", "=x", "a=b=c", "a=x y=z", "k@=x", "@v=x", "a=\x7f", "a=é"],
)
def test_tracestate_drops_invalid_members(member: str) -> None:
    assert parse_tracestate(f"ok=1,{member},ok2=2") == [("ok", "1"), ("ok2", "2")]


def test_tracestate_drops_repeated_keys_after_the_first() -> None:
    assert parse_tracestate("a=1,b=2,a=3") == [("a", "1"), ("b", "2")]


def test_tracestate_keeps_at_most_32_members() -> None:
    members = parse_tracestate(",".join(f"k{i}=v" for i in range(40)))
    assert members == [(f"k{i}", "v") for i in range(32)]


def test_tracestate_of_512_chars_is_propagated_whole() -> None:
    value = ",".join(f"k{i:02d}={'v' * 11}" for i in range(32))
    value = value[: -(len(value) - 512)] if len(value) > 512 else value
    members = parse_tracestate(value)
    assert format_tracestate(members) == value
    assert len(value) <= 512


def test_long_tracestate_loses_long_members_first_then_from_the_right() -> None:
    long_member = ("big", "x" * 200)
    small = [(f"k{i:02d}", "v" * 20) for i in range(20)]  # 20 * 24 + 19 = 499 chars
    value = format_tracestate([small[0], long_member, *small[1:]])
    assert len(value) > 512
    assert parse_tracestate(value) == small
    value = format_tracestate([*small, ("zz", "y" * 30)])
    assert parse_tracestate(value) == small


def test_two_traceparent_headers_mean_no_parent_and_no_state() -> None:
    headers = Headers([("traceparent", VALID), ("traceparent", VALID), ("tracestate", "a=1")])
    assert extract_trace_parent(headers) is None
    assert extract_trace_state(headers) == []


def test_invalid_traceparent_drops_tracestate() -> None:
    headers = Headers([("traceparent", VALID.upper()), ("tracestate", "a=1")])
    assert extract_trace_state(headers) == []


def test_null_traceparent_header_is_no_parent() -> None:
    assert extract_trace_parent(Headers([("traceparent", None)])) is None


def test_several_tracestate_headers_are_combined_in_order() -> None:
    headers = Headers([("tracestate", "a=1"), ("traceparent", VALID), ("tracestate", "b=2")])
    assert extract_trace_parent(headers) == parse_traceparent(VALID)
    assert extract_trace_state(headers) == [("a", "1"), ("b", "2")]
