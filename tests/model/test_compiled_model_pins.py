"""The compiled header model is its Python: every ``Headers`` method and the model's helpers
give the same results, errors and messages on both cores, after any sequence of edits.

A random program of operations (adds, removals, list edits, lookups, codecs, the byte form,
copies, pickling, closing) runs on a ``Headers`` of the installed module and on one of its
``.py`` loaded side by side (``tests.support.cores``); after every step the outcome and the
state must agree. The other helpers of the compiled model: ``test_compiled_model_helpers.py``.
"""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from confluent_kafka import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from kheaders import JSON, LONG, TEXT
from tests.support.cores import installed, outcome, pure

HEADERS = "kheaders._model.headers"

PINNED = frozenset(
    {
        f"{HEADERS}.{name}"
        for name in (
            "_checked",
            "_checked_pair",
            "_shape",
            "_pairs",
            "_codec",
            "_as_header",
            "Headers",
            *(
                f"Headers.{method}"
                for method in [
                    "__init__",
                    "from_confluent",
                    "from_message",
                    "_check_writable",
                    "add",
                    "remove",
                    "set",
                    "clear",
                    "close",
                    "read_only",
                    "append",
                    "extend",
                    "__iadd__",
                    "insert",
                    "__setitem__",
                    "__delitem__",
                    "pop",
                    "sort",
                    "reverse",
                    "__imul__",
                    "__reduce__",
                    "last_header",
                    "last_value",
                    "headers",
                    "values",
                    "keys",
                    "add_value",
                    "set_value",
                    "to_list",
                    "to_dict",
                    "copy",
                    "__copy__",
                    "__iter__",
                    "__reversed__",
                    "__getitem__",
                    "__contains__",
                    "__repr__",
                    "encoded_size",
                    "to_bytes",
                    "from_bytes",
                ]
            ),
            "trusted",
            "_uniform",
            "pairs_of",
            "plain_pairs",
            "received",
            "received_all",
            "received_consumed",
            "consumed_of",
            "_restore",
        )
    }
)
"""What this file pins compiled == pure (``tests/test_compiled_pinned.py`` collects it)."""

# -- hostile keys and values -----------------------------------------------------------------


class _Iterable:
    """Pairs that are neither a list nor a dict (iterable again for the second core)."""

    def __init__(self, pairs: list[Any]) -> None:
        self.pairs = pairs

    def __iter__(self) -> Any:
        return iter(self.pairs)


def _view(data: bytes) -> memoryview:
    return memoryview(data)


_key = st.one_of(
    st.sampled_from(["a", "b", "traceparent", "", "a\x00", "k\udcff", "é"]),
    st.text(max_size=6),
    st.binary(max_size=3),
    st.integers(-3, 3),
    st.none(),
)
_value = st.one_of(
    st.binary(max_size=8),
    st.text(max_size=6),
    st.none(),
    st.builds(bytearray, st.binary(max_size=4)),
    st.binary(max_size=4).map(_view),
    st.integers(),
    st.booleans(),
    st.floats(allow_nan=False),
)
_pair = st.one_of(
    st.tuples(_key, _value),
    st.lists(st.one_of(_key, _value), max_size=3),
    st.builds(lambda k, v: [k, v], _key, _value),
    _key,
)
_items = st.one_of(
    st.none(),
    st.lists(_pair, max_size=5),
    st.dictionaries(_key.filter(lambda k: k is not None), _value, max_size=4),
    st.lists(_pair, max_size=4).map(tuple),
    st.lists(st.tuples(st.sampled_from(["a", "b"]), st.binary(max_size=4)), max_size=4).map(
        _Iterable
    ),
    st.integers(),
)
_index = st.one_of(st.integers(-6, 6), st.builds(slice, st.integers(-4, 4), st.integers(-4, 4)))
_codec = st.sampled_from([LONG, TEXT, JSON])

_OPS = st.one_of(
    st.tuples(st.just("add"), _key, _value),
    st.tuples(st.just("add_pair"), _pair),
    st.tuples(st.just("remove"), _key),
    st.tuples(st.just("set"), _key, _value),
    st.tuples(st.sampled_from(["append", "extend", "iadd"]), st.lists(_pair, max_size=3)),
    st.tuples(st.just("insert"), st.integers(-4, 4), _pair),
    st.tuples(st.just("setitem"), _index, st.one_of(_pair, st.lists(_pair, max_size=2))),
    st.tuples(st.sampled_from(["delitem", "getitem"]), _index),
    st.tuples(st.just("imul"), st.integers(-1, 3)),
    st.tuples(st.sampled_from(["last_header", "headers", "contains", "getitem"]), _key),
    st.tuples(st.sampled_from(["last_value", "values"]), _key, st.none() | _codec),
    st.tuples(st.sampled_from(["add_value", "set_value"]), _key, st.integers(), _codec),
    st.tuples(
        st.sampled_from(
            [
                "clear",
                "close",
                "sort",
                "reverse",
                "keys",
                "to_list",
                "to_dict",
                "copy",
                "copy.copy",
                "pickle",
                "iter",
                "reversed",
                "repr",
                "encoded_size",
                "to_bytes",
                "read_only",
                "plain_pairs",
            ]
        )
    ),
)


def _shown(result: Any) -> Any:
    """A result made comparable across the cores: Headers as their pairs and state."""
    if isinstance(result, list):
        inner = [_shown(x) for x in result]
        read_only = getattr(result, "_read_only", None)
        return ("Headers", inner, read_only) if read_only is not None else inner
    if isinstance(result, tuple):
        return tuple(_shown(x) for x in result)
    if isinstance(result, dict):
        return {k: _shown(v) for k, v in result.items()}
    if hasattr(result, "__next__"):
        return ("iterator", [_shown(x) for x in result])
    return result


def _step(core: ModuleType, h: Any, op: tuple[Any, ...]) -> Callable[[], Any]:
    name, *args = op
    calls: dict[str, Callable[[], Any]] = {
        "add": lambda: h.add(*args),
        "add_pair": lambda: h.add(*args),
        "remove": lambda: h.remove(*args),
        "set": lambda: h.set(*args),
        "append": lambda: [h.append(p) for p in args[0]],
        "extend": lambda: h.extend(args[0]),
        "iadd": lambda: h.__iadd__(args[0]),
        "insert": lambda: h.insert(*args),
        "setitem": lambda: h.__setitem__(*args),
        "delitem": lambda: h.__delitem__(*args),
        "getitem": lambda: h[args[0]],
        "imul": lambda: h.__imul__(*args),
        "last_header": lambda: h.last_header(*args),
        "headers": lambda: h.headers(*args),
        "contains": lambda: args[0] in h,
        "last_value": lambda: h.last_value(*args),
        "values": lambda: h.values(*args),
        "add_value": lambda: h.add_value(*args),
        "set_value": lambda: h.set_value(*args),
        "clear": h.clear,
        "close": h.close,
        "sort": h.sort,
        "reverse": h.reverse,
        "keys": h.keys,
        "to_list": h.to_list,
        "to_dict": h.to_dict,
        "copy": h.copy,
        "copy.copy": lambda: copy.copy(h),
        "pickle": lambda: pickle.loads(pickle.dumps(h)),
        "iter": lambda: iter(h),
        "reversed": lambda: reversed(h),
        "repr": lambda: repr(h),
        "encoded_size": h.encoded_size,
        "to_bytes": h.to_bytes,
        "read_only": lambda: h.read_only,
        "plain_pairs": lambda: core.plain_pairs(h),
    }
    return calls[name]


def _construct(core: ModuleType, how: str, items: Any) -> Callable[[], Any]:
    headers = core.Headers
    return {
        "Headers": lambda: headers(items),
        "from_confluent": lambda: headers.from_confluent(items),
        "from_message": lambda: headers.from_message(Message(topic="t", headers=items)),
        "received": lambda: core.received(items),
        "received_consumed": lambda: core.received_consumed(items, b"k", None),
        "trusted": lambda: core.trusted(items, read_only=False),
        "trusted_read_only": lambda: core.trusted(items, read_only=True),
    }[how]


_VALID_ITEMS = st.lists(
    st.tuples(st.sampled_from(["a", "b", "é"]), st.none() | st.binary(max_size=4)), max_size=4
)


@settings(max_examples=400)
@given(
    st.one_of(
        st.tuples(st.just("Headers"), _items),
        st.tuples(st.just("from_confluent"), st.none() | _VALID_ITEMS),
        st.tuples(st.just("from_message"), st.none() | _VALID_ITEMS),
        st.tuples(
            st.sampled_from(["received", "received_consumed", "trusted", "trusted_read_only"]),
            _VALID_ITEMS,
        ),
    ),
    st.lists(_OPS, max_size=12),
)
def test_any_program_of_edits_and_lookups_agrees(start: tuple[str, Any], ops: list[Any]) -> None:
    how, items = start
    cores = (installed(HEADERS), pure(HEADERS))
    made = [outcome(_construct(core, how, items)) for core in cores]
    assert _shown(made[0]) == _shown(made[1]), start
    if made[0][0] != "ok":
        return
    objects = [made[0][1], made[1][1]]
    for op in ops:
        got = [_shown(outcome(_step(core, h, op))) for core, h in zip(cores, objects, strict=True)]
        assert got[0] == got[1], op
        assert _shown(objects[0]) == _shown(objects[1]), op
    consumed = [core.consumed_of(h) for core, h in zip(cores, objects, strict=True)]
    assert consumed[0] == consumed[1]


_POP = """
import kheaders
from tests.support.cores import installed, outcome, pure
for core in (installed("kheaders._model.headers"), pure("kheaders._model.headers")):
    for args in [(), (0,), (-1,), (5,), (slice(0, 1),), ("a",)]:
        h = core.Headers([("a", b"1"), ("b", None)])
        print(outcome(lambda: h.pop(*args)), list(h))
    print(outcome(lambda: core.Headers([("a", b"1")]).close().pop()))
"""


def test_pop_agrees_and_does_not_crash() -> None:
    """In a child interpreter: a crash fails this test, not the run."""
    done = subprocess.run(
        [sys.executable, "-c", _POP],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 14
    assert lines[:7] == lines[7:]


@settings(max_examples=300)
@given(st.binary(max_size=40))
def test_the_byte_form_decodes_alike(data: bytes) -> None:
    for kind in (bytes, bytearray, memoryview):
        given_as = kind(data)
        a = outcome(lambda: installed(HEADERS).Headers.from_bytes(given_as))  # noqa: B023
        b = outcome(lambda: pure(HEADERS).Headers.from_bytes(given_as))  # noqa: B023
        assert _shown(a) == _shown(b)


@settings(max_examples=200)
@given(st.lists(st.one_of(st.none(), st.just([]), _VALID_ITEMS), max_size=5))
def test_a_batch_of_received_lists_agrees(lists: list[Any]) -> None:
    a = outcome(lambda: installed(HEADERS).received_all(lists))
    b = outcome(lambda: pure(HEADERS).received_all(lists))
    assert _shown(a) == _shown(b)
