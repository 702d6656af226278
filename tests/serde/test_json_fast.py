"""JsonSerializer's orjson path (the ``json`` extra) writes exactly the standard library's bytes.

Every test compares a serializer using orjson with one forced onto the standard library
(``_orjson`` set to ``None`` before construction, as when the extra is not installed), and
one test runs the serializer in a fresh interpreter where ``import orjson`` fails.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import json
import math
import subprocess
import sys
import uuid
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kheaders import Headers, JsonSerializer
from kheaders._serde import json as _serde_json

ROOT = Path(__file__).resolve().parents[2]

# Floats of every magnitude (the small ones are where orjson's text differs from repr),
# integers well past 64 bits, any text (control characters, U+2028, astral planes).
FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [1e-05, -1.5e-07, 9.999e-05, 1e-4, 1e16, 1.2345678901234568e20, 5e-324, -0.0, 1e308]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**64 + 2)
    | FLOATS
    | st.text(st.characters(exclude_categories=["Cs"]))
)
KEYS = st.text(st.characters(exclude_categories=["Cs"]), max_size=6)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(KEYS, inner, max_size=5)
    ),
    max_leaves=20,
)


@pytest.fixture
def stdlib_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serializers built inside the test use the standard library, as without the extra."""
    monkeypatch.setattr(_serde_json, "_orjson", None)


def both(sort_keys: bool = False) -> tuple[JsonSerializer, JsonSerializer]:
    """(orjson-backed, standard-library-only) serializers with the same settings."""
    fast = JsonSerializer(sort_keys=sort_keys)
    saved = _serde_json._orjson
    _serde_json._orjson = None
    try:
        slow = JsonSerializer(sort_keys=sort_keys)
    finally:
        _serde_json._orjson = saved
    return fast, slow


FAST, SLOW = both()
FAST_SORTED, SLOW_SORTED = both(sort_keys=True)


def outcome(ser: JsonSerializer, value: object) -> tuple[str, object]:
    """The bytes written, or the exception's type and message."""
    try:
        return ("bytes", ser.serialize("t", Headers(), value))
    except (TypeError, ValueError) as exc:
        return (type(exc).__name__, str(exc))


def test_orjson_is_used_when_installed() -> None:
    assert _serde_json._orjson is orjson
    assert FAST._fast is not None
    assert SLOW._fast is None


@settings(max_examples=400)
@given(JSON_VALUES)
def test_same_bytes_with_and_without_orjson(value: object) -> None:
    fast = FAST.serialize("t", Headers(), value)
    assert fast == SLOW.serialize("t", Headers(), value)
    if value is not None:
        assert fast == json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@settings(max_examples=200)
@given(st.dictionaries(KEYS, JSON_VALUES, max_size=8))
def test_same_bytes_with_sorted_keys(value: dict[str, object]) -> None:
    assert FAST_SORTED.serialize("t", Headers(), value) == SLOW_SORTED.serialize(
        "t", Headers(), value
    )


def test_plain_records_take_the_orjson_path() -> None:
    """An ordinary event is not re-encoded by the standard library (the speed is real)."""
    value = {"order": 7, "amount": 12.5, "tags": ["a", "é"], "ok": True}
    assert _serde_json._fast_bytes(FAST._fast, value) == orjson.dumps(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "value",
    [{"a": None}, [1e-05], [-2.5e-09], 0.00001234, {"s": "null"}, {"s": "1e-5"}],
    ids=["null", "exp-small", "exp-tiny", "below-1e-4", "text-null", "text-exponent"],
)
def test_values_orjson_writes_differently_go_to_the_standard_library(value: object) -> None:
    assert _serde_json._fast_bytes(FAST._fast, value) is None  # type: ignore[arg-type]
    assert FAST.serialize("t", Headers(), value) == SLOW.serialize("t", Headers(), value)


class Colour(enum.Enum):
    RED = "red"
    PAIR = (1, 2)


class Level(enum.IntEnum):
    HIGH = 3


@dataclasses.dataclass
class Point:
    x: int


Pair = collections.namedtuple("Pair", "a b")

DEEP: list[object] = []
_cursor = DEEP
for _ in range(400):  # deeper than orjson's limit (254), within the standard library's
    _cursor.append([])
    _cursor = _cursor[0]  # type: ignore[assignment]


@pytest.mark.parametrize(
    "value",
    [
        2**64,
        -(2**70),
        {1: "int key", 2.5: "float key", False: "bool key", None: "null key"},
        uuid.UUID(int=0x1234),
        [Colour.RED, Colour.PAIR, Level.HIGH],
        collections.OrderedDict(b=1, a=2),
        Pair(1, "x"),
        DEEP,
        math.nan,
        [math.inf],
        "lone \ud800 surrogate",
        {"k\udcff": 1},
        Point(1),
        datetime.date(2026, 1, 1),
        object(),
        {1, 2},
    ],
    ids=lambda v: type(v).__name__,
)
def test_same_outcome_for_values_orjson_refuses_or_treats_differently(value: object) -> None:
    assert outcome(FAST, value) == outcome(SLOW, value)


def test_uuid_and_enum_are_written_as_text_and_value(stdlib_only: None) -> None:
    data = JsonSerializer().serialize("t", Headers(), [uuid.UUID(int=5), Colour.PAIR, Level.HIGH])
    assert data == b'["00000000-0000-0000-0000-000000000005",[1,2],3]'


def test_circular_data_is_a_value_error_on_both_paths() -> None:
    loop: dict[str, object] = {}
    loop["self"] = loop
    for ser in (FAST, SLOW):
        with pytest.raises(ValueError, match=r"topic 't'.*ircular"):
            ser.serialize("t", Headers(), loop)


def test_without_the_extra_installed_the_standard_library_encodes() -> None:
    """A fresh interpreter where ``import orjson`` fails: same bytes, no orjson."""
    code = (
        "import sys; sys.modules['orjson'] = None\n"
        "from kheaders import Headers, JsonSerializer\n"
        "from kheaders._serde import json as j\n"
        "assert j._orjson is None and JsonSerializer()._fast is None\n"
        "h = Headers()\n"
        "print(JsonSerializer().serialize('t', h, {'a': [1, 2.5, 1e-05, 'é', None]}).decode())\n"
        "print(h.last_value('content-type').decode())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ['{"a":[1,2.5,1e-05,"é",null]}', "application/json"]
