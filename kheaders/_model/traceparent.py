"""W3C Trace Context in record headers: strict ``traceparent`` / ``tracestate`` parsing.

The rules are those of W3C Trace Context (Level 1/2) applied to Kafka headers:

- ``traceparent`` is ``version-traceid-parentid-flags`` in lowercase hex only; version ``ff``
  is invalid; an all-zero trace id or parent id is invalid; version ``00`` allows no
  trailing data; a higher version may carry trailing data after a ``-``. Optional white
  space (space, tab) around the value is ignored, as HTTP does.
- Two (or more) ``traceparent`` headers on one record mean "no valid parent" (restart the
  trace), and an invalid ``traceparent`` drops ``tracestate`` too.
- ``tracestate`` keeps at most 32 members, drops invalid and duplicate members, and is
  propagated whole up to 512 characters (longer lists lose members over 128 characters
  first, then members from the right).

Nothing here raises on any input: bad input gives ``None`` or an empty list.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import Any

from kheaders._model.headers import Headers, pairs
from kheaders._speedups import fields55 as _fields55
from kheaders._speedups import lone_value as _lone_value
from kheaders._speedups import valid55 as _valid55

TRACEPARENT = "traceparent"
"""The header key of the W3C ``traceparent`` field."""
TRACESTATE = "tracestate"
"""The header key of the W3C ``tracestate`` field."""

# version-traceid-parentid-flags, lowercase hex only (values other than 55 plain bytes).
_TRACEPARENT_RE = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_OWS = " \t"
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16
_SAMPLED = frozenset(b"13579bdf")
"""The last hex digit of the flags of a sampled context (bit 0 set)."""

_CACHE_SIZE = 256
"""Distinct valid 55-byte values remembered by :func:`parse_traceparent` (about 40 KB)."""
_cache: dict[bytes, TraceParent] = {}
"""Parsed values by their exact bytes: the records of one span carry the same
``traceparent``, and a consumer meets them close together. Emptied when full. Only valid
values are kept, so a hit returns what parsing returns (the same object: a
:class:`TraceParent` cannot be changed)."""
_cache_get = _cache.get

_MAX_MEMBERS = 32
_MAX_TRACESTATE_CHARS = 512
_LONG_MEMBER = 128

_KEY = re.compile(
    r"[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13}"
)
_VALUE = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")

_new = object.__new__
_FIELDS = ("version", "trace_id", "parent_id", "flags")


def _deprecated(use: str, instead: str) -> None:
    warnings.warn(
        f"{use} is deprecated: TraceParent is no longer a tuple; {instead}",
        DeprecationWarning,
        stacklevel=3,
    )


class TraceParent:
    """A valid W3C ``traceparent``: ``version``, ``trace_id``, ``parent_id`` and ``flags``.

    Ids are integers (as OpenTelemetry's ``SpanContext`` holds them), made when first read:
    a parsed value keeps the header's text, so ``trace_id_hex``, ``sampled`` and
    :meth:`header` need no integer at all. Two values are equal when their four fields are;
    ``version, trace_id, parent_id, flags = tp`` unpacks them.

    It was a ``NamedTuple``: indexing, ``len``, ``_replace``, ``_asdict`` and comparing with a
    plain tuple still work with a DeprecationWarning; ``isinstance(tp, tuple)`` is now False.

    >>> tp = parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    >>> tp.trace_id_hex, tp.parent_id_hex, tp.sampled
    ('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', True)
    >>> tp.header()
    '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    >>> tp == TraceParent(0, 0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331, 1)
    True
    """

    __slots__ = ("_ints", "_raw")
    __match_args__ = ("version", "trace_id", "parent_id", "flags")

    _raw: bytes | None
    """The 55 ASCII bytes ``vv-<trace id>-<parent id>-ff`` of a parsed value (lowercase,
    checked), else ``None``."""
    _ints: tuple[int, int, int, int] | None
    """The four fields, once made."""

    def __init__(self, version: int, trace_id: int, parent_id: int, flags: int) -> None:
        self._raw = None
        self._ints = (version, trace_id, parent_id, flags)

    def _fields(self) -> tuple[int, int, int, int]:
        ints = self._ints
        if ints is None:
            ints = self._ints = _fields55(self._raw)  # type: ignore[arg-type]
        return ints

    @property
    def version(self) -> int:
        """The version (``0`` for ``00``)."""
        ints = self._ints
        return (self._fields() if ints is None else ints)[0]

    @property
    def trace_id(self) -> int:
        """The 128-bit trace id."""
        ints = self._ints
        return (self._fields() if ints is None else ints)[1]

    @property
    def parent_id(self) -> int:
        """The 64-bit parent (span) id."""
        ints = self._ints
        return (self._fields() if ints is None else ints)[2]

    @property
    def flags(self) -> int:
        """The trace flags (bit 0: sampled)."""
        ints = self._ints
        return (self._fields() if ints is None else ints)[3]

    @property
    def trace_id_hex(self) -> str:
        """The trace id as 32 lowercase hex digits."""
        raw = self._raw
        if raw is not None:
            return raw[3:35].decode("ascii")
        return f"{self._fields()[1]:032x}"

    @property
    def parent_id_hex(self) -> str:
        """The parent (span) id as 16 lowercase hex digits."""
        raw = self._raw
        if raw is not None:
            return raw[36:52].decode("ascii")
        return f"{self._fields()[2]:016x}"

    @property
    def sampled(self) -> bool:
        """True when the ``sampled`` flag (bit 0) is set."""
        raw = self._raw
        if raw is not None:
            return raw[54] in _SAMPLED
        return bool(self._fields()[3] & 1)

    def header(self) -> str:
        """The version-00 ``traceparent`` text of this context (what a sender emits)."""
        raw = self._raw
        if raw is not None:
            return "00" + raw[2:].decode("ascii")
        _, trace_id, parent_id, flags = self._fields()
        return f"00-{trace_id:032x}-{parent_id:016x}-{flags:02x}"

    def __iter__(self) -> Iterator[int]:
        return iter(self._fields())

    def __eq__(self, other: object) -> bool:
        if type(other) is TraceParent:
            mine, theirs = self._raw, other._raw
            if mine is not None and theirs is not None:
                return mine == theirs  # one text per value: lowercase, fixed widths
            return self._fields() == other._fields()
        if isinstance(other, tuple):
            _deprecated("comparing a TraceParent with a tuple", "compare tuple(tp)")
            return self._fields() == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        version, trace_id, parent_id, flags = self._fields()
        return (
            f"TraceParent(version={version}, trace_id={trace_id}, parent_id={parent_id},"
            f" flags={flags})"
        )

    def __reduce__(self) -> tuple[type[TraceParent], tuple[int, int, int, int]]:
        return (TraceParent, self._fields())

    # -- what the NamedTuple had, kept for a release -------------------------------------

    def __len__(self) -> int:
        _deprecated("len(TraceParent)", "it always has the four fields")
        return 4

    def __getitem__(self, index: Any) -> Any:
        _deprecated("indexing a TraceParent", "read its attributes (tp.trace_id)")
        return self._fields()[index]

    def _replace(self, **changes: int) -> TraceParent:
        _deprecated("TraceParent._replace", "build TraceParent(version, trace_id, ...)")
        fields = dict(zip(_FIELDS, self._fields(), strict=True))
        unknown = set(changes) - set(_FIELDS)
        if unknown:
            raise ValueError(f"got unexpected field names: {sorted(unknown)!r}")
        fields.update(changes)
        return TraceParent(**fields)

    def _asdict(self) -> dict[str, int]:
        _deprecated("TraceParent._asdict", "read its attributes")
        return dict(zip(_FIELDS, self._fields(), strict=True))


def _parsed(raw: bytes) -> TraceParent:
    """A :class:`TraceParent` over 55 bytes already checked (its ints made when read)."""
    tp: TraceParent = _new(TraceParent)
    tp._raw = raw
    tp._ints = None
    return tp


def _parse55(value: bytes) -> TraceParent | None:
    """Parse 55 bytes (no white space, nothing after the flags); remember a valid result."""
    if not _valid55(value):
        return None
    tp = _parsed(value)
    if len(_cache) >= _CACHE_SIZE:
        _cache.clear()
    _cache[value] = tp
    return tp


def _text(value: object) -> str | None:
    if type(value) is bytes:
        try:
            return value.decode("ascii")
        except UnicodeDecodeError:
            return None
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        try:
            return bytes(value).decode("ascii")
        except UnicodeDecodeError:
            return None
    return None


def parse_traceparent(value: bytes | str | None) -> TraceParent | None:
    """Parse one ``traceparent`` value; ``None`` when it is absent or invalid (never raises).

    >>> parse_traceparent(b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").flags
    1
    >>> parse_traceparent("00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01") is None
    True
    >>> parse_traceparent("ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01") is None
    True
    """
    if type(value) is bytes:
        hit = _cache_get(value)
        if hit is not None:
            return hit
        if len(value) == 55:  # a plain value: no white space, nothing after the flags
            return _parse55(value)
    text = _text(value)
    if text is None:
        return None
    text = text.strip(_OWS)
    match = _TRACEPARENT_RE.match(text)
    if match is None:
        return None
    version, trace_id, parent_id, _ = match.groups()
    if version == "ff" or trace_id == _ZERO_TRACE or parent_id == _ZERO_SPAN:
        return None
    if len(text) > 55 and (version == "00" or text[55] != "-"):
        return None
    return _parsed(text[:55].encode("ascii"))


def parse_tracestate(value: bytes | str | None) -> list[tuple[str, str]]:
    """Parse a ``tracestate`` list into ``(key, value)`` members, W3C limits applied.

    Invalid members and repeated keys (after the first) are dropped, at most 32 members are
    kept, and a list longer than 512 characters loses members over 128 characters, then
    members from the right, until it fits. Never raises; bad input gives ``[]``.

    >>> parse_tracestate("congo=t61rcWkgMzE, rojo=00f067aa0ba902b7, BAD=x")
    [('congo', 't61rcWkgMzE'), ('rojo', '00f067aa0ba902b7')]
    """
    text = _text(value)
    if not text:
        return []
    members: list[tuple[str, str]] = []
    seen: set[str] = set()
    for raw in text.split(","):
        item = raw.strip(_OWS)
        if not item:
            continue
        key, eq, val = item.partition("=")
        if not eq or key in seen or not _KEY.fullmatch(key) or not _VALUE.fullmatch(val):
            continue
        seen.add(key)
        members.append((key, val))
        if len(members) == _MAX_MEMBERS:
            break
    return _fit(members)


def _length(members: list[tuple[str, str]]) -> int:
    return sum(len(k) + 1 + len(v) for k, v in members) + max(len(members) - 1, 0)


def _fit(members: list[tuple[str, str]]) -> list[tuple[str, str]]:
    if _length(members) <= _MAX_TRACESTATE_CHARS:
        return members
    members = [(k, v) for k, v in members if len(k) + 1 + len(v) <= _LONG_MEMBER]
    while _length(members) > _MAX_TRACESTATE_CHARS:
        members.pop()
    return members


def format_tracestate(members: list[tuple[str, str]]) -> str:
    """The header text of ``tracestate`` members (``k1=v1,k2=v2``)."""
    return ",".join(f"{k}={v}" for k, v in members)


def extract_trace_parent(headers: Headers) -> TraceParent | None:
    """The record's creation context: its single valid ``traceparent``, else ``None``.

    Two or more ``traceparent`` headers mean no valid parent (W3C: restart the trace).
    Never raises.

    >>> tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    >>> extract_trace_parent(Headers([("traceparent", tp)])).parent_id_hex
    'b7ad6b7169203331'
    >>> extract_trace_parent(Headers([("traceparent", tp), ("traceparent", tp)])) is None
    True
    """
    found = _lone_value(headers, TRACEPARENT)
    if type(found) is bytes:  # as received: parse_traceparent's first steps, without its call
        hit = _cache_get(found)
        if hit is not None:
            return hit
        if len(found) == 55:
            return _parse55(found)
    return parse_traceparent(found)  # type: ignore[arg-type]


def extract_trace_state(headers: Headers) -> list[tuple[str, str]]:
    """The record's ``tracestate`` members; ``[]`` when its ``traceparent`` is not valid.

    Several ``tracestate`` headers are combined in order, as HTTP combines repeated fields.
    Never raises.
    """
    if extract_trace_parent(headers) is None:
        return []
    parts = [_text(v) for k, v in pairs(headers) if k == TRACESTATE]
    return parse_tracestate(",".join(p for p in parts if p))
