"""The Python twin of :mod:`kheaders._model._traceparent_c`: the two steps of reading a
record's ``traceparent`` that C does faster than compiled Python.

Both twins have the same contract and give the same results; :mod:`kheaders._speedups`
chooses one, and the tests run every caller over both cores (``tests/conftest.py``'s ``core``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["fields55", "lone_value", "valid55"]

# translated, every lowercase hex digit becomes ``x`` and a dash stays a dash (any other byte
# becomes ``?``): a value is well-formed exactly when it translates to the template.
_SHAPE = bytes(
    ord("x") if chr(b) in "0123456789abcdef" else b if b == ord("-") else ord("?")
    for b in range(256)
)
_TEMPLATE = b"xx-" + b"x" * 32 + b"-" + b"x" * 16 + b"-xx"
_ZERO_TRACE = b"0" * 32
_ZERO_SPAN = b"0" * 16

_pairs = list.__iter__


def valid55(value: bytes) -> bool:
    """True when ``value`` is a valid version-00-shaped ``traceparent`` of exactly 55 bytes:
    lowercase hex fields and dashes in place, version not ``ff``, neither id all zeros."""
    return (
        value.translate(_SHAPE) == _TEMPLATE
        and value[:2] != b"ff"
        and value[3:35] != _ZERO_TRACE
        and value[36:52] != _ZERO_SPAN
    )


def fields55(value: bytes) -> tuple[int, int, int, int]:
    """The version, trace id, parent id and flags of 55 bytes; ValueError unless
    :func:`valid55` accepts them."""
    if not valid55(value):
        raise ValueError("not a valid 55-byte traceparent")
    return (int(value[:2], 16), int(value[3:35], 16), int(value[36:52], 16), int(value[53:], 16))


def lone_value(headers: list[Any], key: str) -> object:
    """The value of the only pair with ``key`` in the list ``headers`` (its stored pairs, not
    what a subclass iterates as); ``None`` when there are none or several (and for a null
    value). TypeError when ``headers`` is not a list; a stored item that is not a pair
    raises as unpacking it does."""
    found: object = None
    seen = False
    for k, value in _pairs(headers):
        if k == key:
            if seen:
                return None
            seen = True
            found = value
    return found
