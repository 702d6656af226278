"""KIP-82 record headers: :class:`Header` and the ordered, multi-valued :class:`Headers`.

Semantics follow Apache Kafka's ``RecordHeaders``: insertion order is kept, a key may
appear any number of times, ``remove(key)`` removes every occurrence, ``last_header(key)``
is the most recent one, and headers become read-only once handed to Kafka.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple, TypeAlias, TypeVar, overload

from kheaders._errors import DecodeError, ReadOnlyHeadersError
from kheaders._varint import _encode_unsigned, read_varint, varint_size, write_varint

if TYPE_CHECKING:
    from kheaders._codec import ValueCodec

T = TypeVar("T")

HeaderValue: TypeAlias = bytes | bytearray | memoryview | str | None
"""What a header value may be given as; it is always stored as ``bytes`` or ``None``."""

HeaderTypes: TypeAlias = (
    "Headers | Mapping[str, HeaderValue] | Iterable[tuple[str, HeaderValue]] | None"
)
"""Every shape headers are accepted in at the edges of the API."""


class Header(NamedTuple):
    """One header: a text ``key`` and a ``value`` of bytes, or ``None`` for a null header.

    It is a 2-tuple, so code written for confluent-kafka's ``[(key, value), ...]`` keeps
    working (``for k, v in headers``, ``dict(headers)``).
    """

    key: str
    value: bytes | None


def _checked(key: object, value: object) -> Header:
    """Validate one header and store its value as ``bytes`` (or ``None``).

    Raises TypeError or ValueError naming the key at fault.
    """
    if type(key) is not str:
        if not isinstance(key, str):
            raise TypeError(
                f"header key must be str, got {type(key).__name__} {key!r}"
                " (kheaders never converts keys with str())"
            )
        key = str(key)
    if not key:
        raise ValueError("header key must not be empty")
    if value is None or type(value) is bytes:
        return Header(key, value)
    if isinstance(value, str):
        return Header(key, value.encode("utf-8"))
    if isinstance(value, bytes | bytearray | memoryview):
        return Header(key, bytes(value))
    raise TypeError(
        f"header {key!r}: value must be bytes, bytearray, memoryview, str or None,"
        f" got {type(value).__name__}"
    )


def _pairs(items: object) -> Iterable[tuple[object, object]]:
    if isinstance(items, Mapping):
        return items.items()
    if isinstance(items, str | bytes):
        raise TypeError(
            f"headers must be a Headers, a mapping or pairs, got {type(items).__name__}"
        )
    if not isinstance(items, Iterable):
        raise TypeError(
            f"headers must be a Headers, a mapping or pairs, got {type(items).__name__}"
        )
    return items


_READ_ONLY_MESSAGE = (
    "these headers are read-only: they were already sent to Kafka or received from it."
    " Make a writable copy with Headers(old_headers) and change that."
)


class Headers:
    """Ordered record headers; duplicates allowed; writable until :meth:`close`.

    ``items`` may be ``None``, another ``Headers`` (copied; the copy is writable), a
    mapping, or an iterable of ``(key, value)`` pairs. Values may be ``bytes``,
    ``bytearray``, ``memoryview``, ``str`` (stored as UTF-8) or ``None`` (a null header,
    distinct from ``b""``).

    >>> h = Headers([("a", b"1")]).add("a", "2").add("b", None)
    >>> h.last_header("a")
    Header(key='a', value=b'2')
    >>> list(h.remove("a"))
    [Header(key='b', value=None)]

    Raises TypeError/ValueError (naming the key) for a non-``str`` or empty key or a value
    of another type.
    """

    __slots__ = ("_items", "_read_only")

    _items: list[Header]
    _read_only: bool

    def __init__(self, items: HeaderTypes = None) -> None:
        self._read_only = False
        if items is None:
            self._items = []
        elif type(items) is Headers:
            self._items = list(items)
        else:
            self._items = [_checked(k, v) for k, v in _pairs(items)]

    @classmethod
    def _trusted(
        cls, items: list[Header] | list[tuple[str, bytes | None]], *, read_only: bool
    ) -> Headers:
        """Wrap pairs that are already valid (e.g. from librdkafka) without copying or checks."""
        self = cls.__new__(cls)
        self._items = items  # type: ignore[assignment]
        self._read_only = read_only
        return self

    # -- mutation -------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyHeadersError(_READ_ONLY_MESSAGE)

    @overload
    def add(self, key: Header | tuple[str, HeaderValue], /) -> Headers: ...
    @overload
    def add(self, key: str, value: HeaderValue, /) -> Headers: ...
    def add(self, key: object, value: object = ..., /) -> Headers:
        """Append a header (``add(key, value)`` or ``add(header)``); return ``self``.

        Raises ReadOnlyHeadersError once closed; TypeError/ValueError for a bad key or value.
        """
        if self._read_only:
            raise ReadOnlyHeadersError(_READ_ONLY_MESSAGE)
        if value is ...:
            if not isinstance(key, tuple) or len(key) != 2:
                raise TypeError("add() takes (key, value) or one Header/2-tuple")
            key, value = key
        self._items.append(_checked(key, value))
        return self

    def remove(self, key: str) -> Headers:
        """Remove every header with ``key`` (no-op when absent); return ``self``.

        Raises ReadOnlyHeadersError once closed.
        """
        self._check_writable()
        self._items = [h for h in self._items if h[0] != key]
        return self

    def set(self, key: str, value: HeaderValue) -> Headers:
        """Replace every header with ``key`` by one header ``key=value``; return ``self``.

        The new header goes where the first old one was (at the end when there was none).
        Raises ReadOnlyHeadersError once closed.
        """
        self._check_writable()
        new = _checked(key, value)
        items = self._items
        for i, h in enumerate(items):
            if h[0] == key:
                self._items = [*items[:i], new, *(x for x in items[i + 1 :] if x[0] != key)]
                return self
        items.append(new)
        return self

    def clear(self) -> Headers:
        """Remove all headers; return ``self``. Raises ReadOnlyHeadersError once closed."""
        self._check_writable()
        self._items = []
        return self

    def close(self) -> Headers:
        """Make these headers read-only for good (Kafka's ``setReadOnly``); return ``self``."""
        self._read_only = True
        return self

    @property
    def read_only(self) -> bool:
        """True once :meth:`close` was called (the record was sent or received)."""
        return self._read_only

    # -- reading --------------------------------------------------------------------------

    def last_header(self, key: str) -> Header | None:
        """The last header with ``key``, or ``None``."""
        for h in reversed(self._items):
            if h[0] == key:
                return h if type(h) is Header else Header(*h)
        return None

    def last_value(self, key: str, codec: ValueCodec[T] | None = None) -> T | bytes | None:
        """The last value for ``key`` (decoded with ``codec`` when given), or ``None``.

        A null header also gives ``None``; use :meth:`last_header` to tell the two apart.
        Raises DecodeError when ``codec`` cannot decode the bytes.
        """
        for h in reversed(self._items):
            if h[0] == key:
                value = h[1]
                if codec is None or value is None:
                    return value
                return codec.decode(value)
        return None

    def headers(self, key: str) -> Iterator[Header]:
        """Every header with ``key``, in order."""
        return (Header(*h) for h in self._items if h[0] == key)

    def values(self, key: str) -> list[bytes | None]:
        """Every value of ``key``, in order."""
        return [h[1] for h in self._items if h[0] == key]

    def keys(self) -> list[str]:
        """The distinct keys, in first-seen order."""
        return list(dict.fromkeys(h[0] for h in self._items))

    def add_value(self, key: str, value: T, codec: ValueCodec[T]) -> Headers:
        """Append ``key`` with ``value`` encoded by ``codec`` (e.g. ``LONG``); return self."""
        return self.add(key, codec.encode(value))

    def to_list(self) -> list[tuple[str, bytes | None]]:
        """confluent-kafka's form: a new list of ``(str, bytes | None)`` tuples."""
        return list(self._items)

    def to_dict(self) -> dict[str, bytes | None]:
        """A ``{key: value}`` dict in which the last header of each key wins."""
        return dict(self._items)

    def copy(self) -> Headers:
        """A writable copy (also of read-only headers)."""
        return Headers._trusted(list(self._items), read_only=False)

    def __iter__(self) -> Iterator[Header]:
        items = self._items
        if items and type(items[0]) is not Header:
            return map(Header._make, items)
        return iter(items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __contains__(self, key: object) -> bool:
        return any(h[0] == key for h in self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Headers):
            return self._items == other._items
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"({k!r}, {v!r})" for k, v in self._items)
        suffix = ", read_only=True" if self._read_only else ""
        return f"Headers([{inner}]{suffix})"

    # -- the record-v2 byte form (KIP-82 ``Headers(byte[])`` / ``asBytes()``) ---------------

    def encoded_size(self) -> int:
        """Bytes these headers add to a record-batch v2 record (count included)."""
        size = varint_size(len(self._items))
        for key, value in self._items:
            klen = len(key) if key.isascii() else len(key.encode("utf-8"))
            size += varint_size(klen) + klen
            size += 1 if value is None else varint_size(len(value)) + len(value)
        return size

    def to_bytes(self) -> bytes:
        """Encode as the record-batch v2 header section (Kafka's ``DefaultRecord``).

        >>> Headers([("foo", b"value"), ("bar", None)]).to_bytes().hex(" ")
        '04 06 66 6f 6f 0a 76 61 6c 75 65 06 62 61 72 01'
        """
        parts = [write_varint(len(self._items))]
        append = parts.append
        for key, value in self._items:
            kb = key.encode("utf-8")
            append(_encode_unsigned(len(kb) << 1))
            append(kb)
            if value is None:
                append(b"\x01")
            else:
                append(_encode_unsigned(len(value) << 1))
                append(value)
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> Headers:
        """Decode :meth:`to_bytes` output into writable Headers.

        Raises DecodeError (with the byte offset) on a negative count or length, a length
        past the end of the input, a key that is not UTF-8, or bytes left over.
        """
        view = bytes(data)
        count, pos = read_varint(view, 0)
        if count < 0:
            raise DecodeError(f"negative header count {count}", 0)
        end = len(view)
        # Each header takes at least 2 bytes: a count larger than that is a lie, fail fast.
        if count > (end - pos) // 2:
            raise DecodeError(f"header count {count} exceeds the {end - pos} bytes left", 0)
        items: list[Header] = []
        for _ in range(count):
            at = pos
            klen, pos = read_varint(view, pos)
            if klen < 0 or pos + klen > end:
                raise DecodeError(f"invalid header key length {klen}", at)
            try:
                key = view[pos : pos + klen].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DecodeError(f"header key is not UTF-8: {exc.reason}", pos) from exc
            pos += klen
            at = pos
            vlen, pos = read_varint(view, pos)
            if vlen == -1:
                value = None
            elif vlen < 0 or pos + vlen > end:
                raise DecodeError(f"invalid length {vlen} for header {key!r}", at)
            else:
                value = view[pos : pos + vlen]
                pos += vlen
            items.append(Header(key, value))
        if pos != end:
            raise DecodeError(f"{end - pos} bytes left after the last header", pos)
        return cls._trusted(items, read_only=False)
