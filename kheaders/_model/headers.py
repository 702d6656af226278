"""KIP-82 record headers: :class:`Header` and the ordered, multi-valued :class:`Headers`.

Semantics follow Apache Kafka's ``RecordHeaders``: insertion order is kept, a key may
appear any number of times, ``remove(key)`` removes every occurrence, ``last_header(key)``
is the most recent one, and headers become read-only once handed to Kafka.

Internal API (for kheaders' own modules; no other module touches a ``Headers``' fields,
``tests/test_static.py`` checks it): :func:`received` and :func:`trusted` wrap pairs that are
already valid (decoded, or from librdkafka) without copying or checking them, and
:func:`pairs_of` gives the pairs list itself, for the produce path to hand to librdkafka at
no copy cost. Like Kafka's ``RecordHeaders``, the public class never exposes its list.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, TypeAlias, TypeVar, overload

from kheaders._errors import DecodeError, ReadOnlyHeadersError
from kheaders._model.header import Header
from kheaders._model.headerwire import block_size, decode_block, encode_block
from kheaders._model.keys import KEY_SIZES, key_size, shown
from kheaders._model.received import message_headers
from kheaders._model.redact import redacted_repr

if TYPE_CHECKING:
    from kheaders._codec.protocol import ValueCodec

__all__ = ["Header", "HeaderTypes", "HeaderValue", "Headers"]

T = TypeVar("T")
_new_tuple = tuple.__new__

HeaderValue: TypeAlias = bytes | bytearray | memoryview | str | None
"""What a header value may be given as; it is always stored as ``bytes`` or ``None``."""

HeaderTypes: TypeAlias = (
    "Headers | Mapping[str, HeaderValue] | Iterable[tuple[str, HeaderValue]] | None"
)
"""Every shape headers are accepted in at the edges of the API."""


# tuple.__new__ builds a Header without the NamedTuple constructor's Python-level frame;
# _checked runs once per header on every produce.
_new_header = tuple.__new__


def _checked(key: object, value: object) -> Header:
    """Validate one header and store its value as ``bytes`` (or ``None``).

    Raises TypeError (naming the type) for a key that is not ``str``, InvalidNameError
    (naming the key) for a key outside the rule of :mod:`kheaders._model.keys`, TypeError or
    ValueError naming the key for a bad value (never echoing the value).
    """
    if type(key) is not str:
        key_size(key)
        key = str.__str__(key)
    elif key not in KEY_SIZES:
        key_size(key)
    if value is None or type(value) is bytes:
        return _new_header(Header, (key, value))
    if isinstance(value, str):
        try:
            return _new_header(Header, (key, value.encode("utf-8")))
        except UnicodeEncodeError as exc:
            raise ValueError(f"header {key!r}: text value is not UTF-8: {exc.reason}") from exc
    if isinstance(value, bytes | bytearray | memoryview):
        return _new_header(Header, (key, bytes(value)))
    raise TypeError(
        f"header {key!r}: value must be bytes, bytearray, memoryview, str or None,"
        f" got {type(value).__name__}"
    )


def _checked_pair(pair: object) -> Header:
    """:func:`_checked` for one ``(key, value)`` pair; TypeError when it is not a pair."""
    if not isinstance(pair, tuple | list) or len(pair) != 2:
        raise TypeError(f"headers must be (key, value) pairs, got {_shape(pair)}")
    return _checked(pair[0], pair[1])


def _shape(pair: object) -> str:
    """What a malformed pair is, by type and size; its first item only when it is a str (a
    key). Never the values: a misplaced secret must not reach an exception message."""
    if not isinstance(pair, tuple | list):
        return f"a {type(pair).__name__}"
    first = f" (first item {shown(pair[0])})" if pair and isinstance(pair[0], str) else ""
    return f"a {type(pair).__name__} of {len(pair)} items{first}"


def _pairs(items: object) -> Iterable[tuple[object, object] | list[object]]:
    if isinstance(items, Mapping):
        return items.items()
    if isinstance(items, bytes | bytearray | memoryview):
        raise TypeError(
            f"headers must be a Headers, a mapping or pairs, got {type(items).__name__};"
            " decode the record-v2 byte form with Headers.from_bytes(data)"
        )
    if isinstance(items, str):
        raise TypeError("headers must be a Headers, a mapping or pairs, got str")
    if not isinstance(items, Iterable):
        raise TypeError(
            f"headers must be a Headers, a mapping or pairs, got {type(items).__name__}"
        )
    return items


def _codec(codec: ValueCodec[T]) -> ValueCodec[T]:
    """``codec`` itself when it is a value codec; else a TypeError saying what is expected."""
    if callable(getattr(codec, "decode", None)) and callable(getattr(codec, "encode", None)):
        return codec
    raise TypeError(
        f"codec must be a value codec (an object with encode() and decode(), such as"
        f" kheaders.values.LONG or TEXT), got {type(codec).__name__} {codec!r}"
    )


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

    Raises TypeError for a key that is not ``str``, InvalidNameError (naming the key) for an
    empty key, one holding NUL or one not encodable as UTF-8 (the rule of
    :mod:`kheaders._model.keys`: librdkafka takes keys as C strings), and TypeError/ValueError
    naming the key for a value of another type.
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
        elif type(items) is list or type(items) is dict:  # the usual forms: no ABC checks
            self._items = checked = []
            sizes = KEY_SIZES
            for pair in items if isinstance(items, list) else items.items():
                # the common case, (known key, bytes | None) tuples, checked inline
                if type(pair) is tuple and len(pair) == 2:
                    key, value = pair
                    if (
                        type(key) is str
                        and key in sizes
                        and (value is None or type(value) is bytes)
                    ):
                        checked.append(_new_header(Header, pair))
                        continue
                checked.append(_checked_pair(pair))
        else:
            self._items = [_checked_pair(pair) for pair in _pairs(items)]

    @classmethod
    def from_confluent(
        cls, raw: list[tuple[str, bytes | None]] | None, *, read_only: bool = False
    ) -> Headers:
        """Wrap what confluent-kafka's ``Message.headers()`` returns (``None`` = no headers).

        The list is copied, so the message is never changed through these headers; with
        ``read_only=True`` (a received record) they are closed as well.

        >>> Headers.from_confluent(None), Headers.from_confluent([("a", b"1")], read_only=True)
        (Headers([]), Headers([('a', b'1')], read_only=True))

        Raises TypeError when ``raw`` is not a list (or ``None``).
        """
        if raw is None:
            return trusted([], read_only=read_only)
        if type(raw) is not list:
            raise TypeError(f"expected Message.headers() (list or None), got {type(raw).__name__}")
        return trusted([_new_tuple(Header, h) for h in raw], read_only=read_only)

    @classmethod
    def from_message(cls, msg: object) -> Headers:
        """The read-only headers of a received record (a confluent-kafka ``Message``).

        ``msg.headers()`` is read through the one guard of :mod:`kheaders._model.received`.

        >>> from confluent_kafka import Message
        >>> Headers.from_message(Message(topic="t", headers=[("a", b"1")]))
        Headers([('a', b'1')], read_only=True)

        Raises DeserializationError (``field="headers"``, naming the offset) when
        confluent-kafka cannot read them (a header key that is not UTF-8), TypeError when the
        message holds something other than a list, ``Headers`` or ``None``.
        """
        raw = message_headers(msg)
        if type(raw) is Headers:
            return raw
        return cls.from_confluent(raw, read_only=True)

    @classmethod
    def _trusted(
        cls, items: list[Header] | list[tuple[str, bytes | None]], *, read_only: bool
    ) -> Headers:
        """Kept for kheaders/_client/lean.py until it uses :func:`trusted`; then removed."""
        return trusted(items, read_only=read_only)

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

    @overload
    def last_value(self, key: str, codec: None = None) -> bytes | None: ...
    @overload
    def last_value(self, key: str, codec: ValueCodec[T]) -> T | None: ...
    def last_value(self, key: str, codec: ValueCodec[T] | None = None) -> T | bytes | None:
        """The last value for ``key`` (decoded with ``codec`` when given), or ``None``.

        A null header also gives ``None``; use :meth:`last_header` to tell the two apart.
        Raises DecodeError when ``codec`` cannot decode the bytes, TypeError when ``codec`` is
        not a value codec (e.g. the string ``"long"`` instead of ``LONG``).
        """
        for h in reversed(self._items):
            if h[0] == key:
                value = h[1]
                if codec is None or value is None:
                    return value
                return _codec(codec).decode(value)
        return None

    def headers(self, key: str) -> Iterator[Header]:
        """Every header with ``key``, in order."""
        return (Header(*h) for h in self._items if h[0] == key)

    @overload
    def values(self, key: str, codec: None = None) -> list[bytes | None]: ...
    @overload
    def values(self, key: str, codec: ValueCodec[T]) -> list[T | None]: ...
    def values(
        self, key: str, codec: ValueCodec[T] | None = None
    ) -> list[bytes | None] | list[T | None]:
        """Every value of ``key``, in order, decoded with ``codec`` when given.

        Null headers stay ``None``. Raises DecodeError when ``codec`` cannot decode a value.

        >>> from kheaders.values import LONG
        >>> Headers().add_value("n", 1, LONG).add("n", None).values("n", LONG)
        [1, None]
        """
        if codec is None:
            return [h[1] for h in self._items if h[0] == key]
        decode = _codec(codec).decode
        return [None if h[1] is None else decode(h[1]) for h in self._items if h[0] == key]

    def keys(self) -> list[str]:
        """The distinct keys, in first-seen order."""
        return list(dict.fromkeys(h[0] for h in self._items))

    def add_value(self, key: str, value: T, codec: ValueCodec[T]) -> Headers:
        """Append ``key`` with ``value`` encoded by ``codec`` (e.g. ``LONG``); return self.

        >>> from kheaders.values import LONG
        >>> Headers().add_value("n", 1, LONG).last_header("n")
        Header(key='n', value=b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01')

        Raises ReadOnlyHeadersError once closed; TypeError/ValueError when ``codec`` cannot
        encode ``value``.
        """
        if self._read_only:
            raise ReadOnlyHeadersError(_READ_ONLY_MESSAGE)
        return self.add(key, _codec(codec).encode(value))

    def set_value(self, key: str, value: T, codec: ValueCodec[T]) -> Headers:
        """Replace every ``key`` header by one holding ``value`` encoded by ``codec``; return self.

        Raises ReadOnlyHeadersError once closed; TypeError/ValueError as :meth:`add_value`.
        """
        self._check_writable()
        return self.set(key, _codec(codec).encode(value))

    def to_list(self) -> list[tuple[str, bytes | None]]:
        """confluent-kafka's form: a new list of ``(str, bytes | None)`` tuples."""
        return list(self._items)

    def to_dict(self) -> dict[str, bytes | None]:
        """A ``{key: value}`` dict in which the last header of each key wins."""
        return dict(self._items)

    def copy(self) -> Headers:
        """A writable copy (also of read-only headers)."""
        return trusted(list(self), read_only=False)

    def __iter__(self) -> Iterator[Header]:
        items = self._items
        if items and (type(items[0]) is not Header or type(items[-1]) is not Header):
            return map(Header._make, items)
        return iter(items)

    def __getitem__(self, key: str) -> bytes | None:
        """The last value of ``key`` (so ``dict(headers)`` keeps the last of each key).

        >>> h = Headers([("a", b"1"), ("a", b"2")])
        >>> h["a"], dict(h)
        (b'2', {'a': b'2'})

        Raises KeyError when ``key`` is absent, TypeError for a non-``str`` key.
        """
        if type(key) is not str and not isinstance(key, str):
            raise TypeError(
                f"headers are looked up by str key, got {type(key).__name__};"
                " use list(headers) for positions"
            )
        for h in reversed(self._items):
            if h[0] == key:
                return h[1]
        raise KeyError(key)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __contains__(self, key: object) -> bool:
        # a plain loop: no generator frame per call (interceptors test a few keys per record)
        for h in self._items:  # noqa: SIM110
            if h[0] == key:
                return True
        return False

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Headers):
            return self._items == other._items
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"({k!r}, {redacted_repr(k, v)})" for k, v in self._items)
        suffix = ", read_only=True" if self._read_only else ""
        return f"Headers([{inner}]{suffix})"

    # -- the record-v2 byte form (KIP-82 ``Headers(byte[])`` / ``asBytes()``) ---------------

    def encoded_size(self) -> int:
        """Bytes these headers add to a record-batch v2 record (count included).

        >>> Headers([("foo", b"value"), ("bar", None)]).encoded_size()
        16

        Raises ValueError for a key that is not encodable as UTF-8.
        """
        return block_size(self._items)

    def to_bytes(self) -> bytes:
        """Encode as the record-batch v2 header section (Kafka's ``DefaultRecord``).

        >>> Headers([("foo", b"value"), ("bar", None)]).to_bytes().hex(" ")
        '04 06 66 6f 6f 0a 76 61 6c 75 65 06 62 61 72 01'

        Raises ValueError for a key that is not encodable as UTF-8 (a lone surrogate).
        """
        return encode_block(self._items)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> Headers:
        """Decode :meth:`to_bytes` output into writable Headers.

        >>> Headers.from_bytes(bytes.fromhex("02 02 61 01"))
        Headers([('a', None)])

        Raises DecodeError (with the byte offset) on a negative count or length, a length
        past the end of the input, a key that is not UTF-8, or bytes left over.
        """
        view = data if type(data) is bytes else bytes(data)
        items, pos = decode_block(view, 0)
        if pos != len(view):
            raise DecodeError(f"{len(view) - pos} bytes left after the last header", pos)
        return trusted(items, read_only=False)  # decode_block made every item a Header


# -- internal API: kheaders' own modules build and read Headers only through these -----------

_new_object = object.__new__


def trusted(items: list[Header] | list[tuple[str, bytes | None]], *, read_only: bool) -> Headers:
    """Headers around pairs that are already valid (decoded, or from librdkafka), not copied.

    No check is made: the caller vouches for ``(str, bytes | None)`` pairs with non-empty keys
    and hands the list over (it must not change it afterwards). Read-only headers may hold
    plain tuples (made ``Header`` on iteration); writable ones always hold ``Header`` items,
    so every later edit keeps them uniform.
    """
    if not read_only:
        for h in items:
            if type(h) is not Header:
                items = [x if type(x) is Header else _new_tuple(Header, x) for x in items]
                break
    self = _new_object(Headers)
    self._items = items  # type: ignore[assignment]
    self._read_only = read_only
    return self


def received(items: list[Header] | list[tuple[str, bytes | None]]) -> Headers:
    """``trusted(items, read_only=True)`` for the consume path: one small call per record."""
    self = _new_object(Headers)
    self._items = items  # type: ignore[assignment]
    self._read_only = True
    return self


def pairs_of(headers: Headers) -> list[tuple[str, bytes | None]]:
    """The pairs list of ``headers`` itself (not a copy), in confluent-kafka's form.

    For handing closed headers to librdkafka and to size checks without copying: the caller
    only reads it. Use :meth:`Headers.to_list` for a list of one's own.
    """
    return headers._items  # type: ignore[return-value]
