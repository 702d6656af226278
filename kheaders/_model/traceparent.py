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
import struct
from binascii import unhexlify
from typing import TYPE_CHECKING, NamedTuple

from kheaders._model.headers import Headers, pairs

if TYPE_CHECKING:
    from kheaders import _cython as cython
else:
    try:  # the compiled core: Cython reads this import itself (pure-Python mode)
        import cython
    except ModuleNotFoundError:  # plain Python without Cython installed
        from kheaders import _cython as cython

TRACEPARENT = "traceparent"
"""The header key of the W3C ``traceparent`` field."""
TRACESTATE = "tracestate"
"""The header key of the W3C ``tracestate`` field."""

_COMPILED: bool = cython.compiled
"""True in the compiled core (read once: plain Python then pays one global lookup)."""

# version-traceid-parentid-flags, lowercase hex only (values other than 55 plain bytes).
_TRACEPARENT_RE = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")

# The common case, exactly 55 bytes as received, is checked by position in one C call:
# translated, every lowercase hex digit becomes ``x`` and a dash stays a dash (any other byte
# becomes ``?``), so the value is well-formed exactly when it translates to the template.
_SHAPE = bytes(
    ord("x") if chr(b) in "0123456789abcdef" else b if b == ord("-") else ord("?")
    for b in range(256)
)
_TEMPLATE = b"xx-" + b"x" * 32 + b"-" + b"x" * 16 + b"-xx"
_FIELDS = struct.Struct(">B16sQB").unpack
_from_bytes = int.from_bytes
_new_tuple = tuple.__new__
_OWS = " \t"
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16
_ZERO_ID = bytes(16)

_CACHE_SIZE = 256
"""Distinct valid 55-byte values remembered by :func:`parse_traceparent` (about 80 KB)."""
_cache: dict[bytes, TraceParent] = {}
"""Parsed values by their exact bytes, in the pure-Python core: the records of one span
carry the same ``traceparent``, and a consumer meets them close together. Emptied when full.
Only valid values are kept, so a hit returns what parsing returns. The compiled core parses
in about what a lookup costs, and keeps none."""
_cache_get = _cache.get
"""The cache's lookup, found once (each ``_cache.get`` makes a bound method)."""

_MAX_MEMBERS = 32
_MAX_TRACESTATE_CHARS = 512
_LONG_MEMBER = 128

_KEY = re.compile(
    r"[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13}"
)
_VALUE = re.compile(r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]")


class TraceParent(NamedTuple):
    """A valid W3C ``traceparent``: ``version``, ``trace_id``, ``parent_id`` and ``flags``.

    Ids are integers (as OpenTelemetry's ``SpanContext`` holds them).

    >>> tp = parse_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    >>> tp.trace_id_hex, tp.parent_id_hex, tp.sampled
    ('0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331', True)
    >>> tp.header()
    '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    """

    version: int
    trace_id: int
    parent_id: int
    flags: int

    @property
    def trace_id_hex(self) -> str:
        """The trace id as 32 lowercase hex digits."""
        return f"{self.trace_id:032x}"

    @property
    def parent_id_hex(self) -> str:
        """The parent (span) id as 16 lowercase hex digits."""
        return f"{self.parent_id:016x}"

    @property
    def sampled(self) -> bool:
        """True when the ``sampled`` flag (bit 0) is set."""
        return bool(self.flags & 1)

    def header(self) -> str:
        """The version-00 ``traceparent`` text of this context (what a sender emits)."""
        return f"00-{self.trace_id:032x}-{self.parent_id:016x}-{self.flags:02x}"


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


if not cython.compiled:  # the compiled core has this function in C (traceparent.pxd)

    def _parse55(cls: type[TraceParent], value: bytes) -> TraceParent | None:
        """Parse 55 bytes (no white space, nothing after the flags) into a ``cls``; remember
        a valid result."""
        if value.translate(_SHAPE) != _TEMPLATE:
            return None
        # one unhexlify and one unpack give the fields: version, trace id (16 bytes), parent
        # id, flags
        version, trace_id, parent, flags = _FIELDS(unhexlify(value.replace(b"-", b"")))
        if version == 0xFF or trace_id == _ZERO_ID or not parent:
            return None
        # tuple.__new__: a NamedTuple's own constructor is Python code
        tp: TraceParent = _new_tuple(cls, (version, _from_bytes(trace_id), parent, flags))
        if len(_cache) >= _CACHE_SIZE:
            _cache.clear()
        _cache[value] = tp
        return tp


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
        if not _COMPILED:
            hit = _cache_get(value)
            if hit is not None:
                return hit
        if len(value) == 55:  # a plain value: no white space, nothing after the flags
            return _parse55(TraceParent, value)
    text = _text(value)
    if text is None:
        return None
    text = text.strip(_OWS)
    match = _TRACEPARENT_RE.match(text)
    if match is None:
        return None
    version, trace_id, parent_id, flags = match.groups()
    if version == "ff" or trace_id == _ZERO_TRACE or parent_id == _ZERO_SPAN:
        return None
    if len(text) > 55 and (version == "00" or text[55] != "-"):
        return None
    return TraceParent(int(version, 16), int(trace_id, 16), int(parent_id, 16), int(flags, 16))


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


if not cython.compiled:  # the compiled core has this function in C (traceparent.pxd)

    def _lone_value(headers: Headers, key: str) -> object:
        """The value of the only header ``key`` in ``headers``; ``None`` when there are none
        or several (and for a null value)."""
        found: object = None
        seen = False
        for k, value in pairs(headers):
            if k == key:
                if seen:
                    return None
                seen = True
                found = value
        return found


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
        if not _COMPILED:
            hit = _cache_get(found)
            if hit is not None:
                return hit
        if len(found) == 55:
            return _parse55(TraceParent, found)
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
