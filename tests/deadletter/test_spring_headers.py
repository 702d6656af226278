"""Spring Kafka's header encodings, and the headers a failure is republished with."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kheaders import DeserializationError
from kheaders.deadletter import spring as sh
from kheaders.deadletter import spring_headers, without_retry_state

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


ORIGIN = [
    sh.ORIGINAL_TOPIC,
    sh.ORIGINAL_PARTITION,
    sh.ORIGINAL_OFFSET,
    sh.ORIGINAL_TIMESTAMP,
    sh.ORIGINAL_TIMESTAMP_TYPE,
]
FAILURE = [
    sh.EXCEPTION_FQCN,
    sh.EXCEPTION_CAUSE_FQCN,
    sh.EXCEPTION_MESSAGE,
    sh.EXCEPTION_STACKTRACE,
]
RETRY = [sh.ORIGINAL_TIMESTAMP_RETRY, sh.ATTEMPTS, sh.BACKOFF_TIMESTAMP]


def _last(headers: list[tuple[str, bytes | None]], name: str) -> bytes | None:
    return [v for k, v in headers if k == name][-1]


def _hops(errors: list[BaseException]) -> list[list[tuple[str, bytes | None]]]:
    """The headers of each hop of one record failing with ``errors`` in turn."""
    headers: list[tuple[str, bytes | None]] = [("app", b"x")]
    out = []
    for n, error in enumerate(errors):
        headers = spring_headers(
            headers,
            topic="orders" if n == 0 else f"orders-retry-{n}",
            partition=0,
            offset=1 if n == 0 else 99,
            timestamp=(1, 1000 + 4000 * n),
            group=None,
            error=error,
            next_attempt=n + 2,
            due_ms=2000 + 7000 * n,
        )
        out.append(headers)
    return out


def test_a_hop_writes_spring_s_names_in_spring_s_order() -> None:
    """As Spring 4.1 writes them (pinned by tests/interop/test_spring_retry.py): the
    exception headers first, the origin at the first failure only, one retry set per hop
    appended; earlier exception headers removed."""
    first, second, third = _hops([ValueError("one"), TypeError("two"), KeyError("three")])
    assert [k for k, _ in first] == ["app", *FAILURE, *ORIGIN, *RETRY]
    assert [k for k, _ in second] == ["app", *ORIGIN, *RETRY, *FAILURE, *RETRY]
    assert [k for k, _ in third] == ["app", *ORIGIN, *RETRY, *RETRY, *FAILURE, *RETRY]


def test_later_hops_keep_the_origin_and_replace_the_exception() -> None:
    _, second = _hops([ValueError("one"), TypeError("two")])
    assert _last(second, sh.ORIGINAL_TOPIC) == b"orders"
    assert _last(second, sh.ORIGINAL_OFFSET) == sh.encode_long(1)
    assert [v for k, v in second if k == sh.ORIGINAL_TIMESTAMP_RETRY] == [
        sh.encode_big_integer(1000)
    ] * 2  # the first hop's, at every hop
    assert _last(second, sh.EXCEPTION_FQCN) == b"builtins.TypeError"
    assert [v for k, v in second if k == sh.EXCEPTION_MESSAGE] == [b"two"]
    assert [v for k, v in second if k == sh.ATTEMPTS] == [sh.encode_int(2), sh.encode_int(3)]
    assert without_retry_state(second) == [("app", b"x")]


def test_readers_take_the_last_of_the_appended_retry_sets() -> None:
    from kheaders.deadletter import describe, failure

    *_, third = _hops([ValueError("one"), TypeError("two"), KeyError("three")])
    assert describe(third)[0].startswith("retry: next attempt 4, due ")
    found = failure(third)
    assert found is not None
    assert found.failed_attempt == 3
    assert found.error is not None
    assert found.error.startswith("builtins.KeyError")


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


def test_a_long_message_and_trace_are_cut_the_trace_keeping_its_end() -> None:
    try:
        try:
            raise KeyError("y" * 20000)
        except KeyError as cause:
            raise ValueError("x" * 5000) from cause
    except ValueError as exc:
        error = exc
    out = dict(
        spring_headers(
            [],
            topic="t",
            partition=0,
            offset=0,
            timestamp=(1, 1),
            group=None,
            error=error,
            next_attempt=2,
            due_ms=0,
        )
    )
    assert out[sh.EXCEPTION_MESSAGE] == b"x" * 4096
    trace = out[sh.EXCEPTION_STACKTRACE]
    assert trace is not None
    assert len(trace) == 16384
    assert trace.endswith(b"ValueError: " + b"x" * 5000 + b"\n")
