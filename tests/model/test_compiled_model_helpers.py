"""The compiled helpers of ``limits``, ``received`` and ``traceparent`` that
``test_compiled_core.py`` does not call are their Python: the same results, errors and
messages on hostile input (settings, limits, unreadable records, trace context)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from confluent_kafka import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.cores import agree, installed, outcome, pure

PINNED = frozenset(
    {
        "kheaders._model.limits._within",
        "kheaders._model.limits._refused",
        "kheaders._model.limits.HeaderLimits.__post_init__",
        "kheaders._model.limits.HeaderLimits.from_config",
        "kheaders._model.received.unreadable_headers",
        "kheaders._model.traceparent.TraceParent",
        "kheaders._model.traceparent.TraceParent.trace_id_hex",
        "kheaders._model.traceparent.TraceParent.parent_id_hex",
        "kheaders._model.traceparent.TraceParent.sampled",
        "kheaders._model.traceparent.TraceParent.header",
        "kheaders._model.traceparent._length",
        "kheaders._model.traceparent._fit",
    }
)
"""What this file pins compiled == pure (``tests/test_compiled_pinned.py`` collects it)."""


_setting = st.one_of(st.integers(-2, 70), st.text(max_size=4), st.none(), st.booleans())


@settings(max_examples=300)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "kheaders.header.limits.max.headers",
                "kheaders.header.limits.max.key.bytes",
                "kheaders.header.limits.max.value.bytes",
                "kheaders.header.limits.max.total.bytes",
                "kheaders.header.limits.enabled",
                "kheaders.header.limits.other",
                "bootstrap.servers",
            ]
        ),
        _setting,
        max_size=4,
    ),
    st.lists(st.tuples(st.text(max_size=70), st.binary(max_size=70)), max_size=6),
)
def test_limits_from_settings_agree(config: dict[str, Any], items: list[Any]) -> None:
    module = "kheaders._model.limits"
    a = outcome(lambda: installed(module).HeaderLimits.from_config(config))
    b = outcome(lambda: pure(module).HeaderLimits.from_config(config))
    assert a[0] == b[0]
    assert repr(a[1]) == repr(b[1]).replace("limits_pure", "limits")
    if a[0] == "ok" and a[1] is not None:  # __post_init__, _within and _refused on each core
        assert outcome(lambda: a[1].check(items)) == outcome(lambda: b[1].check(items))
        assert a[1].plain_budget == b[1].plain_budget


@given(st.tuples(*[st.integers(-1, 70) | st.text(max_size=2) | st.none()] * 4))
def test_limits_refused_at_construction_agree(values: tuple[Any, ...]) -> None:
    module = "kheaders._model.limits"
    a = outcome(lambda: repr(installed(module).HeaderLimits(*values)))
    b = outcome(lambda: repr(pure(module).HeaderLimits(*values)))
    assert a == b


class _Unreadable:
    """A consumed record whose header key confluent-kafka cannot decode."""

    def __init__(self) -> None:
        self.replaced: object = "untouched"

    def headers(self) -> Any:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    def set_headers(self, value: object) -> None:
        self.replaced = value

    def topic(self) -> str:
        return "orders"

    def partition(self) -> int:
        return 3

    def offset(self) -> int:
        return 41


@given(st.sampled_from([None, [], "x"]))
def test_unreadable_headers_give_the_same_error(replacement: object) -> None:
    module = "kheaders._model.received"
    results: list[object] = []
    for core in (installed(module), pure(module)):
        msg = _Unreadable()
        err = core.unreadable_headers(msg, SystemError("x"), replacement)
        results.append((type(err).__name__, str(err), msg.replaced, err.field))

        def read(core: ModuleType = core) -> object:
            return core.message_headers(_Unreadable())

        results.append(outcome(read))
        got, errors = core.headers_of_all([Message(topic="t"), _Unreadable()], replacement)
        results.append((got, [(i, str(e)) for i, e in errors]))
    assert results[:3] == results[3:]


_hex = st.text("0123456789abcdef", min_size=0, max_size=40)


@settings(max_examples=300)
@given(_hex, _hex, st.sampled_from(["00", "01", "fe", "ff"]), st.sampled_from(["00", "01", "03"]))
def test_trace_parents_agree_field_by_field(
    trace: str, span: str, version: str, flags: str
) -> None:
    module = "kheaders._model.traceparent"
    text = f"{version}-{trace.rjust(32, '0')[:32]}-{span.rjust(16, '0')[:16]}-{flags}"

    def fields(core: ModuleType) -> Any:
        tp = core.parse_traceparent(text)
        if tp is None:
            return None
        return (tuple(tp), tp.trace_id_hex, tp.parent_id_hex, tp.sampled, tp.header(), repr(tp))

    assert outcome(lambda: fields(installed(module))) == outcome(lambda: fields(pure(module)))


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            st.text("abz09_-*/@", min_size=1, max_size=260),
            st.text("abz09 =,", max_size=260),
        ),
        max_size=40,
    )
)
def test_long_trace_states_are_cut_alike(members: list[tuple[str, str]]) -> None:
    module = "kheaders._model.traceparent"
    agree(module, "format_tracestate", members)
    agree(module, "_fit", members)
    agree(module, "_length", members)
