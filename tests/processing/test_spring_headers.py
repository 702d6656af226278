"""Spring Kafka's header encodings, and the headers a failure is republished with."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import DeserializationError
from kheaders.processing import spring_headers as sh
from kheaders.processing._failure import spring_headers, without_retry_state

# Java: BigInteger.valueOf(n).toByteArray(), as printed by jshell
JAVA_BIG_INTEGER = {
    0: "00",
    1: "01",
    127: "7f",
    128: "0080",
    255: "00ff",
    256: "0100",
    -1: "ff",
    -128: "80",
    -129: "ff7f",
    2**63 - 1: "7fffffffffffffff",
    -(2**63): "8000000000000000",
    1_700_000_000_000: "018bcfe56800",
}


@pytest.mark.parametrize(("value", "java"), JAVA_BIG_INTEGER.items())
def test_big_integer_matches_javas_to_byte_array(value: int, java: str) -> None:
    assert sh.encode_big_integer(value).hex() == java
    assert sh.decode_big_integer(bytes.fromhex(java)) == value


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_big_integer_round_trips_minimally(value: int) -> None:
    data = sh.encode_big_integer(value)
    assert sh.decode_big_integer(data) == value
    # minimal: dropping the first byte changes the value (or leaves nothing)
    assert len(data) == 1 or sh.decode_big_integer(data[1:]) != value


@given(st.integers(min_value=1, max_value=100))
def test_attempts_read_four_bytes_and_the_legacy_byte(n: int) -> None:
    assert sh.decode_attempts(sh.encode_int(n)) == n
    assert sh.decode_attempts(bytes([n])) == n


@given(st.binary(max_size=12))
def test_attempts_never_fail_on_any_bytes(data: bytes) -> None:
    assert 1 <= sh.decode_attempts(data) <= sh.ATTEMPTS_HARD_CAP


@pytest.mark.parametrize(
    "data", [None, b"", b"\x00\x00\x00\x00", b"\x00\x00\x00\x65", b"\xff\xff\xff\xff", b"\x00\x02"]
)
def test_attempts_out_of_shape_or_range_read_as_one(data: bytes | None) -> None:
    assert sh.decode_attempts(data) == 1


@given(st.binary(max_size=12))
def test_timestamps_decode_only_one_to_eight_bytes(data: bytes) -> None:
    got = sh.decode_timestamp(data)
    assert (got is None) == (not 1 <= len(data) <= 8)


def _failure(cause: BaseException) -> ValueError:
    try:
        try:
            raise cause
        except BaseException as inner:
            raise ValueError("handler failed") from inner
    except ValueError as outer:
        return outer


def test_first_failure_adds_origin_exception_and_retry_headers() -> None:
    consumed: list[tuple[str, bytes | None]] = [("a", b"1"), ("a", None), ("b", b"")]
    out = spring_headers(
        consumed,
        topic="orders",
        partition=2,
        offset=7,
        timestamp=(1, 1_700_000_000_000),
        group="billing",
        error=_failure(KeyError("missing")),
        next_attempt=2,
        due_ms=1_700_000_001_000,
    )
    assert out[:3] == consumed
    added = dict(out[3:])
    assert added[sh.ORIGINAL_PARTITION] == b"\x00\x00\x00\x02"
    assert added[sh.ORIGINAL_OFFSET] == b"\x00" * 7 + b"\x07"
    assert added[sh.EXCEPTION_FQCN] == b"builtins.ValueError"
    assert added[sh.EXCEPTION_CAUSE_FQCN] == b"builtins.KeyError"
    assert added[sh.ATTEMPTS] == b"\x00\x00\x00\x02"
    assert added[sh.BACKOFF_TIMESTAMP] == sh.encode_big_integer(1_700_000_001_000)
    assert added[sh.ORIGINAL_TIMESTAMP_RETRY] == sh.encode_big_integer(1_700_000_000_000)


def test_later_hops_keep_the_origin_and_replace_the_exception() -> None:
    first = spring_headers(
        [("app", b"x")],
        topic="orders",
        partition=0,
        offset=1,
        timestamp=(1, 1000),
        group=None,
        error=ValueError("one"),
        next_attempt=2,
        due_ms=2000,
    )
    second = spring_headers(
        first,
        topic="orders-retry",
        partition=0,
        offset=99,
        timestamp=(1, 5000),
        group=None,
        error=TypeError("two"),
        next_attempt=3,
        due_ms=9000,
    )
    keys = [k for k, _ in second]
    assert all(keys.count(k) == 1 for k in keys)
    got = dict(second)
    assert got[sh.ORIGINAL_TOPIC] == b"orders"
    assert got[sh.ORIGINAL_OFFSET] == sh.encode_long(1)
    assert got[sh.ORIGINAL_TIMESTAMP_RETRY] == sh.encode_big_integer(1000)
    assert got[sh.EXCEPTION_FQCN] == b"builtins.TypeError"
    assert got[sh.EXCEPTION_MESSAGE] == b"two"
    assert got[sh.ATTEMPTS] == sh.encode_int(3)
    assert without_retry_state(second) == [("app", b"x")]


def test_a_key_deserialization_failure_uses_the_key_exception_headers() -> None:
    try:
        try:
            b"\xff".decode()
        except UnicodeDecodeError as exc:
            raise DeserializationError("key failed", message=None, field="key") from exc
    except DeserializationError as err:
        error = err
    out = dict(
        spring_headers(
            [],
            topic="t",
            partition=0,
            offset=0,
            timestamp=(0, 0),
            group=None,
            error=error,
            next_attempt=2,
            due_ms=0,
        )
    )
    assert out[sh.KEY_EXCEPTION_FQCN] == b"builtins.UnicodeDecodeError"
    assert sh.EXCEPTION_FQCN not in out
    assert out[sh.ORIGINAL_TIMESTAMP] == sh.encode_long(-1)  # no timestamp: Java's -1


def test_the_module_the_docs_name_imports_by_its_dotted_path() -> None:
    """docs/processing.md names ``kheaders.processing.spring_headers``: a ``from ... import``
    of it works (issue 35.4), and it is the one implementation the package attribute is."""
    import kheaders.processing
    from kheaders.processing.spring_headers import ATTEMPTS, decode_attempts

    assert decode_attempts(b"\x00\x00\x00\x03") == 3
    assert ATTEMPTS == "retry_topic-attempts"
    assert kheaders.processing.spring_headers.decode_attempts is decode_attempts
