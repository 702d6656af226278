"""The consume side of the compiled core is its Python: a received record's Headers, the
guard around ``Message.headers()``, and the ``traceparent`` parse, on hostile input.

Each function is called on the installed module (the extension where the build compiled it)
and on its ``.py`` loaded side by side (``tests.support.cores``), and the two must agree on
results (values, types by name, read-only state, what ``TraceParent`` behaves as) and on
errors (type and message). The C twins in ``traceparent.pxd`` and ``headers.pxd`` are reached
through these functions; their reference counting is checked by memory staying flat.
"""

from __future__ import annotations

import copy
import gc
import pickle
import tracemalloc
from collections.abc import Callable
from functools import partial
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kheaders._errors import DeserializationError
from kheaders._model.header import Header
from tests.support.cores import installed, is_compiled, pure

PINNED: frozenset[str] = frozenset(
    {
        "kheaders._model.traceparent.parse_traceparent",
        "kheaders._model.traceparent.extract_trace_parent",
        "kheaders._model.traceparent.extract_trace_state",
        "kheaders._model.traceparent._parse55",  # C in the compiled core (traceparent.pxd)
        "kheaders._model.traceparent._lone_value",  # C in the compiled core (traceparent.pxd)
        "kheaders._model.headers.received",
        "kheaders._model.headers.received_all",
        "kheaders._model.headers.received_consumed",
        "kheaders._model.headers.consumed_of",
        "kheaders._model.headers.Headers.from_message",
        "kheaders._model.received.message_headers",
        "kheaders._model.received.headers_of_all",
        "kheaders._model.received.unreadable_headers",
    }
)
"""The functions of compiled modules whose compiled == pure properties are in this file."""

TRACEPARENT_MODULE = "kheaders._model.traceparent"
HEADERS_MODULE = "kheaders._model.headers"
RECEIVED_MODULE = "kheaders._model.received"


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """What a call gives: its result, or its error's type and message."""
    try:
        return ("ok", call())
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def _both(
    module: str, call: Callable[..., Any], *args: Any
) -> tuple[tuple[str, Any], tuple[str, Any]]:
    """``call(module, *args)`` on the installed module and on its Python source."""
    fast = _outcome(partial(call, installed(module), *args))
    return fast, _outcome(partial(call, pure(module), *args))


# -- traceparent: the 55-byte C parse -----------------------------------------------------

_HEX = "0123456789abcdef"
_hex_text = st.text(alphabet=_HEX, min_size=1, max_size=1)


@st.composite
def _near_traceparents(draw: st.DrawFn) -> bytes:
    """55 bytes: a valid shape with extreme or random fields, then a few bytes changed to any
    byte (the C parse reads them by position)."""
    digit = st.one_of(st.just("0"), st.just("f"), _hex_text)
    half = st.one_of(st.just("0" * 16), st.just("f" * 16), st.text(_HEX, min_size=16, max_size=16))
    version = draw(st.sampled_from(["00", "01", "fe", "ff", "cc"]))
    high, low, parent = draw(half), draw(half), draw(half)
    flags = draw(digit) + draw(digit)
    data = bytearray(f"{version}-{high}{low}-{parent}-{flags}".encode())
    for at, byte in draw(st.lists(st.tuples(st.integers(0, 54), st.integers(0, 255)), max_size=3)):
        data[at] = byte
    assert len(data) == 55
    return bytes(data)


def _as_seen(tp: Any) -> Any:
    """Everything a user can observe of a parse result, as plain values."""
    if tp is None:
        return None
    restored = pickle.loads(pickle.dumps(tp))
    return (
        type(tp).__name__,
        tuple(tp),
        repr(tp),
        hash(tp) == hash(tuple(tp)),
        isinstance(tp, tuple),
        len(tp),
        tp._asdict(),
        tp._replace(flags=0),
        (tp.version, tp.trace_id, tp.parent_id, tp.flags),
        (tp.trace_id_hex, tp.parent_id_hex, tp.sampled, tp.header()),
        restored == tp,
        type(restored) is type(tp),
        copy.copy(tp) == tp,
        gc.is_tracked(tp) or not gc.isenabled(),
    )


@settings(max_examples=500)
@given(st.one_of(_near_traceparents(), st.binary(min_size=55, max_size=55)))
def test_the_55_byte_parse_agrees_and_its_result_behaves_as_a_named_tuple(value: bytes) -> None:
    fast, slow = _both(TRACEPARENT_MODULE, lambda m: _as_seen(m.parse_traceparent(value)))
    assert fast == slow
    # the text path (a regular expression) is the rule both byte paths follow
    text = value.decode("latin-1")
    by_text = _outcome(lambda: _as_seen(pure(TRACEPARENT_MODULE).parse_traceparent(text)))
    assert fast == by_text


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["traceparent", "tracestate", "Traceparent", "x", "traceparen"]),
            st.one_of(_near_traceparents(), st.none(), st.binary(max_size=60)),
        ),
        max_size=5,
    ),
    st.booleans(),
)
def test_extracting_from_received_headers_agrees(
    pairs: list[tuple[str, bytes | None]], as_header: bool
) -> None:
    """Headers as a consumer builds them (librdkafka's plain tuples, or Header pairs)."""
    items = [Header(k, v) if as_header else (k, v) for k, v in pairs]
    received = installed(HEADERS_MODULE).received(items)
    fast, slow = _both(TRACEPARENT_MODULE, lambda m: _as_seen(m.extract_trace_parent(received)))
    assert fast == slow
    fast, slow = _both(TRACEPARENT_MODULE, lambda m: m.extract_trace_state(received))
    assert fast == slow


class _Key(str):
    """A key that is a ``str`` subclass (compared through its own ``__eq__``)."""


_odd_item = st.one_of(
    st.tuples(st.sampled_from(["traceparent", "x"]), _near_traceparents()),
    st.lists(st.sampled_from(["traceparent", b"v", "x"]), max_size=3),
    st.tuples(st.sampled_from(["traceparent", "x"])),
    st.tuples(st.just("traceparent"), st.just(b"v"), st.just(b"w")),
    st.builds(lambda v: (_Key("traceparent"), v), _near_traceparents()),
    st.integers(),
    st.just("ab"),
    st.just(b"tv"),
    st.none(),
)


@settings(max_examples=300)
@given(st.lists(_odd_item, max_size=5))
def test_the_header_walk_agrees_on_malformed_lists(items: list[Any]) -> None:
    """Not what a consumer builds, but what a caller may pass: the C walk stops where the
    Python loop stops, with the interpreter's error and message."""
    fast, slow = _both(TRACEPARENT_MODULE, lambda m: _as_seen(m.extract_trace_parent(items)))
    assert fast == slow


@given(
    st.one_of(st.integers(), st.text(max_size=3), st.dictionaries(st.text(max_size=2), st.none()))
)
def test_the_header_walk_refuses_what_is_not_a_list_alike(headers: Any) -> None:
    fast, slow = _both(TRACEPARENT_MODULE, lambda m: m.extract_trace_parent(headers))
    assert fast == slow
    assert fast[0] == "TypeError"


# -- a received record's Headers ----------------------------------------------------------

_keys = st.one_of(
    st.sampled_from(["traceparent", "a", "k\x00", "é"]), st.text(min_size=1, max_size=6)
)
_values = st.one_of(st.binary(max_size=12), st.none())
_pair = st.tuples(_keys, _values)
_items = st.lists(
    st.one_of(_pair, _pair.map(lambda p: Header(*p))), max_size=5
)  # plain tuples (librdkafka's), Header pairs (a delivery report's snapshot), mixed


def _shown(headers: Any) -> Any:
    """A Headers as a user sees it (its class is each core's own)."""
    if headers is None:
        return None
    return (
        type(headers).__name__,
        headers.read_only,
        list(headers),
        [type(h).__name__ for h in headers],
        list.__len__(headers),
        repr(headers),
    )


@settings(max_examples=300)
@given(st.lists(st.one_of(_items, st.none()), min_size=1, max_size=6))
def test_received_headers_of_a_batch_agree(lists: list[Any]) -> None:
    def batch(m: Any) -> Any:
        out, missing = m.received_all(lists)
        return [_shown(h) for h in out], missing

    fast, slow = _both(HEADERS_MODULE, batch)
    assert fast == slow
    for items in lists:
        fast, slow = _both(HEADERS_MODULE, lambda m, items: _shown(m.received(items or ())), items)
        assert fast == slow


@settings(max_examples=200)
@given(
    _items, st.one_of(st.binary(max_size=8), st.none()), st.one_of(st.binary(max_size=8), st.none())
)
def test_received_headers_keep_the_consumed_bytes_alike(
    items: list[Any], key: bytes | None, value: bytes | None
) -> None:
    def kept(m: Any) -> Any:
        h = m.received_consumed(items, key, value)
        return (_shown(h), m.consumed_of(h), m.consumed_of(m.Headers(h)), m.consumed_of(h.copy()))

    fast, slow = _both(HEADERS_MODULE, kept)
    assert fast == slow
    assert fast[1][1] == (key, value)
    assert fast[1][2] is None


def test_received_headers_refuse_every_change_on_both_cores() -> None:
    changes: list[Callable[[Any], object]] = [
        lambda h: h.add("b", b"2"),
        lambda h: h.append(("b", b"2")),
        lambda h: h.remove("a"),
        lambda h: h.set("a", b"3"),
        lambda h: h.clear(),
        lambda h: h.extend([("b", b"2")]),
    ]
    for module in (installed(HEADERS_MODULE), pure(HEADERS_MODULE)):
        out, missing = module.received_all([[("a", b"1")], None, []])
        assert missing == 2
        h = out[0]
        for change in changes:
            kind, message = _outcome(partial(change, h))
            assert kind == "ReadOnlyHeadersError", kind
            assert "read-only" in message
        assert list(h) == [("a", b"1")]
        writable = module.Headers(h)
        assert not writable.read_only
        assert module.consumed_of(writable) is None


# -- the guard around Message.headers() -----------------------------------------------------


class _Unreadable:
    """A record whose ``headers()`` fails as confluent-kafka's does for a non-UTF-8 key."""

    def __init__(self, offset: int, failure: type[Exception]) -> None:
        self._offset = offset
        self._failure = failure
        self.replaced: list[object] = []

    def headers(self) -> Any:
        if self.replaced:
            return self.replaced[-1]
        if self._failure is UnicodeDecodeError:
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        raise self._failure("<built-in method headers> returned a result with an exception set")

    def set_headers(self, headers: object) -> None:
        self.replaced.append(headers)

    def topic(self) -> str:
        return "orders"

    def partition(self) -> int:
        return 3

    def offset(self) -> int:
        return self._offset


class _Readable:
    def __init__(self, headers: Any) -> None:
        self._headers = headers

    def headers(self) -> Any:
        return self._headers


@settings(max_examples=100)
@given(
    st.lists(
        st.one_of(
            _items.map(_Readable),
            st.tuples(st.integers(0, 10**6), st.sampled_from([SystemError, UnicodeDecodeError])),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_the_guard_turns_unreadable_headers_into_the_same_error(batch: list[Any]) -> None:
    def read(m: Any) -> Any:
        msgs = [
            _Unreadable(*item) if isinstance(item, tuple) else item for item in batch
        ]  # fresh records for each core: the guard replaces unreadable headers
        lists, failed = m.headers_of_all(msgs, "REPLACED")
        one_by_one = [_outcome(partial(m.message_headers, msg)) for msg in msgs]
        return (
            lists,
            [(i, type(e).__name__, str(e), e.field) for i, e in failed],
            one_by_one,
        )

    fast, slow = _both(RECEIVED_MODULE, read)
    assert fast == slow
    _, (lists, failed, one_by_one) = fast
    bad = [i for i, item in enumerate(batch) if isinstance(item, tuple)]
    assert [i for i, *_ in failed] == bad
    for i, kind, message, field in failed:
        assert kind == "DeserializationError"
        assert field == "headers"
        assert f"offset {batch[i][0]}" in message
        assert lists[i] is None
        assert one_by_one[i] == ("ok", "REPLACED")  # the corrupt list is never handed out again


def test_the_guard_names_the_offset_on_both_cores() -> None:
    for module in (installed(RECEIVED_MODULE), pure(RECEIVED_MODULE)):
        record = _Unreadable(41, SystemError)
        kind, message = _outcome(partial(module.message_headers, record))
        assert kind == DeserializationError.__name__
        assert "topic 'orders' partition 3 offset 41" in message
        assert record.replaced == [None]


# -- the C twins keep their references straight ----------------------------------------------


def _growth(work: Callable[[], object], rounds: int = 20_000) -> int:
    """Bytes still allocated after ``rounds`` calls of ``work`` whose results are dropped."""
    work()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(rounds):
            work()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_parsing_and_wrapping_leak_nothing() -> None:
    """A reference kept by mistake (an int, a tuple, a Headers per call) would show as
    hundreds of kilobytes over 20,000 calls; both cores stay within a few."""
    value = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    pairs = [("traceparent", value), ("a", b"1")]
    for core in (installed, pure):
        tpm = core(TRACEPARENT_MODULE)
        hm = core(HEADERS_MODULE)
        assert _growth(partial(tpm.parse_traceparent, value)) < 64_000
        assert _growth(partial(tpm.parse_traceparent, value[:-1] + b"x")) < 64_000
        assert _growth(partial(hm.received_all, [pairs, None])) < 64_000
        assert _growth(partial(hm.received, pairs)) < 64_000


def test_the_compiled_core_runs_the_c_parse_where_it_was_built() -> None:
    """Where the build compiled traceparent.py, its 55-byte parse is not the Python one (the
    pure-Python core's cache is its sign) and agrees with it."""
    module = installed(TRACEPARENT_MODULE)
    value = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    first = module.parse_traceparent(value)
    assert first == pure(TRACEPARENT_MODULE).parse_traceparent(value)
    if is_compiled(module):
        assert module.parse_traceparent(value) is not first
        assert not hasattr(module, "_parse55")  # a C function, not a Python one
    else:
        assert module.parse_traceparent(value) is first
