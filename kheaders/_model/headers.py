"""KIP-82 record headers: :class:`Header` and the ordered, multi-valued :class:`Headers`.

Semantics follow Apache Kafka's ``RecordHeaders``: insertion order is kept, a key may
appear any number of times, ``remove(key)`` removes every occurrence, ``last_header(key)``
is the most recent one, and headers become read-only once handed to Kafka.

Internal API (for kheaders' own modules; no other module touches a ``Headers``' fields,
``tests/test_static.py`` checks it): :func:`received` (:func:`received_all` for a batch)
and :func:`trusted` wrap pairs that are already valid (decoded, or from librdkafka) without
checking them; a ``Headers`` is itself the list of pairs (so it goes to librdkafka as it
is), :func:`pairs_of` types it so, :func:`pairs` iterates the stored pairs without making
each a :class:`Header`, and :func:`plain_pairs` stores closed headers' pairs as plain
tuples (which the garbage collector stops tracking) while a delivery report keeps them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, SupportsIndex, TypeAlias, TypeVar, overload

from kheaders._errors import DecodeError, ReadOnlyHeadersError
from kheaders._model.header import Header
from kheaders._model.headerwire import block_size, decode_block, encode_block
from kheaders._model.keys import KEY_SIZES, key_size, shown
from kheaders._model.received import message_headers
from kheaders._model.redact import redacted_repr

if TYPE_CHECKING:
    from kheaders._codec.protocol import ValueCodec

__all__ = [
    "READ_ONLY_MESSAGE",
    "Header",
    "HeaderTypes",
    "HeaderValue",
    "Headers",
    "pairs",
    "pairs_of",
    "plain_pairs",
    "received",
    "received_all",
    "trusted",
]

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


_TYPED = {int: "LONG", bool: "BOOL"}  # the codec an error message suggests for a value


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
        + (
            f"; a typed value: Headers.add_value({key!r}, v, kheaders.{_TYPED[type(value)]})"
            if type(value) in _TYPED
            else ""
        )
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


READ_ONLY_MESSAGE = (
    "these headers are read-only: they were already sent to Kafka or received from it."
    " Make a writable copy with Headers(old_headers) and change or send that."
)
"""The one wording for changing, or sending again, headers that belong to a sent record."""


_list_iter: Callable[[list[Any]], Iterator[Any]] = list.__iter__
_list_reversed: Callable[[list[Any]], Iterator[Any]] = list.__reversed__
_list_getitem: Callable[[list[Any], SupportsIndex | slice], Any] = list.__getitem__
_list_setitem: Callable[[list[Any], SupportsIndex | slice, Any], None] = list.__setitem__
_list_extend: Callable[[list[Any], Iterable[Any]], None] = list.extend
_list_pop: Callable[[list[Any], SupportsIndex], Any] = list.pop
"""``list.pop`` itself: compiled, ``list.pop(self, i)`` calls ``self.pop`` (endless, here)."""
_make = Header._make

pairs: Callable[[list[Any]], Iterator[tuple[str, bytes | None]]] = list.__iter__
"""``pairs(headers)``: the stored ``(key, value)`` pairs, in order, as they are kept.

Received headers keep librdkafka's plain tuples (iterating a :class:`Headers` makes each a
:class:`Header`); code inside kheaders that only reads keys and values iterates this way.
"""


def _as_header(item: tuple[str, bytes | None]) -> Header:
    return item if type(item) is Header else _make(item)


class Headers(list[Any]):  # Any: ``"key" in headers`` is a lookup by key, too
    """Ordered record headers; duplicates allowed; writable until :meth:`close`.

    A ``Headers`` is a ``list`` of :class:`Header` pairs (so code written for
    confluent-kafka's ``[(key, value), ...]`` keeps working: ``h[0]``, ``len(h)``,
    ``h == [("a", b"1")]``, ``isinstance(h, list)``) with KIP-82's methods on top. A ``str``
    subscript is a lookup by key (``h["a"]``: the last value); list operations that change
    the list check their pairs as :meth:`add` does and raise ReadOnlyHeadersError once
    closed; those that build a new list (``h + other``, ``h[1:]``) give a plain ``list``.

    ``items`` may be ``None``, another ``Headers`` (copied; the copy is writable), a
    mapping, or an iterable of ``(key, value)`` pairs. Values may be ``bytes``,
    ``bytearray``, ``memoryview``, ``str`` (stored as UTF-8) or ``None`` (a null header,
    distinct from ``b""``).

    >>> h = Headers([("a", b"1")]).add("a", "2").add("b", None)
    >>> h.last_header("a")
    Header(key='a', value=b'2')
    >>> list(h.remove("a"))
    [Header(key='b', value=None)]
    >>> h == [("b", None)], h[0], h["b"]
    (True, Header(key='b', value=None), None)

    Raises TypeError for a key that is not ``str``, InvalidNameError (naming the key) for an
    empty key, one holding NUL or one not encodable as UTF-8 (the rule of
    :mod:`kheaders._model.keys`: librdkafka takes keys as C strings), and TypeError/ValueError
    naming the key for a value of another type.
    """

    # ``__weakref__``: other layers may keep data beside a Headers object for as long as it
    # lives (the client's consumed bytes, kheaders._client.consumed), never in it
    __slots__ = ("__weakref__", "_read_only")

    _read_only: bool

    def __init__(self, items: HeaderTypes = None) -> None:
        self._read_only = False
        if items is None:
            return
        if type(items) is Headers:
            _list_extend(self, items)  # iterating makes every item a Header
        elif type(items) is list or type(items) is dict:  # the usual forms: no ABC checks
            checked: list[Header] = []
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
            _list_extend(self, checked)
        else:
            _list_extend(self, [_checked_pair(pair) for pair in _pairs(items)])

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
        if not isinstance(raw, list):
            raise TypeError(f"expected Message.headers() (list or None), got {type(raw).__name__}")
        return trusted([_new_tuple(Header, h) for h in _list_iter(raw)], read_only=read_only)

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

    # -- mutation -------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyHeadersError(READ_ONLY_MESSAGE)

    @overload
    def add(self, key: Header | tuple[str, HeaderValue], /) -> Headers: ...
    @overload
    def add(self, key: str, value: HeaderValue, /) -> Headers: ...
    def add(self, key: object, value: object = ..., /) -> Headers:
        """Append a header (``add(key, value)`` or ``add(header)``); return ``self``.

        Raises ReadOnlyHeadersError once closed; TypeError/ValueError for a bad key or value.
        """
        if self._read_only:
            raise ReadOnlyHeadersError(READ_ONLY_MESSAGE)
        if value is ...:
            if not isinstance(key, tuple) or len(key) != 2:
                raise TypeError("add() takes (key, value) or one Header/2-tuple")
            key, value = key
        list.append(self, _checked(key, value))
        return self

    def remove(self, key: str) -> Headers:  # type: ignore[override]
        """Remove every header with ``key`` (no-op when absent); return ``self``.

        Unlike ``list.remove``, it takes a key, not a pair (Kafka's ``remove(key)``).
        Raises ReadOnlyHeadersError once closed.
        """
        self._check_writable()
        _list_setitem(self, slice(None), [h for h in _list_iter(self) if h[0] != key])
        return self

    def set(self, key: str, value: HeaderValue) -> Headers:
        """Replace every header with ``key`` by one header ``key=value``; return ``self``.

        The new header goes where the first old one was (at the end when there was none).
        Raises ReadOnlyHeadersError once closed.
        """
        if self._read_only:  # inline, not _check_writable(): interceptors set per record
            raise ReadOnlyHeadersError(READ_ONLY_MESSAGE)
        new = _checked(key, value)
        for i, h in enumerate(_list_iter(self)):
            if h[0] == key:
                rest = [x for x in _list_getitem(self, slice(i + 1, None)) if x[0] != key]
                _list_setitem(self, slice(i, None), [new, *rest])
                return self
        list.append(self, new)
        return self

    def clear(self) -> Headers:  # type: ignore[override]
        """Remove all headers; return ``self``. Raises ReadOnlyHeadersError once closed."""
        self._check_writable()
        list.clear(self)
        return self

    def close(self) -> Headers:
        """Make these headers read-only for good (Kafka's ``setReadOnly``); return ``self``."""
        self._read_only = True
        return self

    @property
    def read_only(self) -> bool:
        """True once :meth:`close` was called (the record was sent or received)."""
        return self._read_only

    # -- list's own mutators: checked like add(), refused once closed ---------------------

    def append(self, pair: Header | tuple[str, HeaderValue]) -> None:
        """``list.append``: as :meth:`add` with one pair, returning ``None``."""
        self.add(pair)

    def extend(self, pairs: Iterable[tuple[str, HeaderValue]]) -> None:
        """``list.extend``: every pair checked as :meth:`add` does (all or none are added)."""
        self._check_writable()
        _list_extend(self, [_checked_pair(p) for p in _pairs(pairs)])

    def __iadd__(self, pairs: Iterable[tuple[str, HeaderValue]]) -> Headers:  # type: ignore[override,misc]
        self.extend(pairs)
        return self

    def insert(self, index: SupportsIndex, pair: tuple[str, HeaderValue]) -> None:
        """``list.insert`` of one pair, checked as :meth:`add` does."""
        self._check_writable()
        list.insert(self, index, _checked_pair(pair))

    def __setitem__(self, index: SupportsIndex | slice, pair: object) -> None:
        self._check_writable()
        if isinstance(index, slice):
            _list_setitem(self, index, [_checked_pair(p) for p in _pairs(pair)])
        else:
            _list_setitem(self, index, _checked_pair(pair))

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        self._check_writable()
        list.__delitem__(self, index)

    def pop(self, index: SupportsIndex = -1) -> Header:
        """``list.pop``: remove and return the header at ``index`` (default: the last)."""
        self._check_writable()
        return _as_header(_list_pop(self, index))

    def sort(self, *, key: Callable[[Header], Any] | None = None, reverse: bool = False) -> None:
        """``list.sort`` (by key then value unless ``key`` is given)."""
        self._check_writable()
        list.sort(self, key=key, reverse=reverse)

    def reverse(self) -> None:
        """``list.reverse``."""
        self._check_writable()
        list.reverse(self)

    def __imul__(self, n: SupportsIndex) -> Headers:
        self._check_writable()
        return list.__imul__(self, n)

    def __reduce__(self) -> tuple[Callable[..., Headers], tuple[list[Header], bool]]:
        # list's default pickling would append items before restoring the read-only flag
        return (_restore, (list(self), self._read_only))

    # -- reading --------------------------------------------------------------------------

    def last_header(self, key: str) -> Header | None:
        """The last header with ``key``, or ``None``."""
        for h in _list_reversed(self):
            if h[0] == key:
                return _as_header(h)
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
        for h in _list_reversed(self):
            if h[0] == key:
                value: bytes | None = h[1]
                if codec is None or value is None:
                    return value
                return _codec(codec).decode(value)
        return None

    def headers(self, key: str) -> Iterator[Header]:
        """Every header with ``key``, in order."""
        return (_as_header(h) for h in _list_iter(self) if h[0] == key)

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
            return [h[1] for h in _list_iter(self) if h[0] == key]
        decode = _codec(codec).decode
        return [None if h[1] is None else decode(h[1]) for h in _list_iter(self) if h[0] == key]

    def keys(self) -> list[str]:
        """The distinct keys, in first-seen order."""
        return list(dict.fromkeys(h[0] for h in _list_iter(self)))

    def add_value(self, key: str, value: T, codec: ValueCodec[T]) -> Headers:
        """Append ``key`` with ``value`` encoded by ``codec`` (e.g. ``LONG``); return self.

        >>> from kheaders.values import LONG
        >>> Headers().add_value("n", 1, LONG).last_header("n")
        Header(key='n', value=b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01')

        Raises ReadOnlyHeadersError once closed; TypeError/ValueError when ``codec`` cannot
        encode ``value``.
        """
        if self._read_only:
            raise ReadOnlyHeadersError(READ_ONLY_MESSAGE)
        return self.add(key, _codec(codec).encode(value))

    def set_value(self, key: str, value: T, codec: ValueCodec[T]) -> Headers:
        """Replace every ``key`` header by one holding ``value`` encoded by ``codec``; return self.

        Raises ReadOnlyHeadersError once closed; TypeError/ValueError as :meth:`add_value`.
        """
        self._check_writable()
        return self.set(key, _codec(codec).encode(value))

    def to_list(self) -> list[tuple[str, bytes | None]]:
        """confluent-kafka's form: a new plain list of ``(str, bytes | None)`` tuples."""
        return list.copy(self)

    def to_dict(self) -> dict[str, bytes | None]:
        """A ``{key: value}`` dict in which the last header of each key wins."""
        return dict(_list_iter(self))

    def copy(self) -> Headers:
        """A writable copy (also of read-only headers)."""
        return trusted(_list_iter(self), read_only=False)

    def __copy__(self) -> Headers:
        return trusted(_list_iter(self), read_only=self._read_only)

    def __iter__(self) -> Iterator[Header]:
        if self and (
            type(_list_getitem(self, 0)) is not Header
            or type(_list_getitem(self, -1)) is not Header
        ):
            return map(_make, _list_iter(self))
        return _list_iter(self)

    def __reversed__(self) -> Iterator[Header]:
        return map(_as_header, _list_reversed(self))

    @overload
    def __getitem__(self, key: str) -> bytes | None: ...
    @overload
    def __getitem__(self, key: SupportsIndex) -> Header: ...
    @overload
    def __getitem__(self, key: slice) -> list[Header]: ...
    def __getitem__(self, key: str | SupportsIndex | slice) -> bytes | Header | list[Header] | None:
        """``h["k"]``: the last value of ``k`` (so ``dict(headers)`` keeps the last of each
        key); ``h[0]``: the first :class:`Header`; ``h[1:]``: a plain list of them.

        >>> h = Headers([("a", b"1"), ("a", b"2")])
        >>> h["a"], dict(h), h[0]
        (b'2', {'a': b'2'}, Header(key='a', value=b'1'))

        Raises KeyError when a key is absent, IndexError for a position past the end,
        TypeError for a subscript of another type.
        """
        if isinstance(key, str):
            for h in _list_reversed(self):
                if h[0] == key:
                    return h[1]  # type: ignore[no-any-return]
            raise KeyError(key)
        if isinstance(key, slice):
            return [_as_header(h) for h in _list_getitem(self, key)]
        try:
            return _as_header(_list_getitem(self, key))
        except TypeError:
            raise TypeError(
                f"headers are looked up by str key or int position, got {type(key).__name__}"
            ) from None

    def __contains__(self, key: object) -> bool:
        """``"k" in h``: a header with key ``k`` exists; a pair is looked up as in a list."""
        if type(key) is str:
            # a plain loop: no generator frame per call (interceptors test a few keys per record)
            for h in _list_iter(self):  # noqa: SIM110
                if h[0] == key:
                    return True
            return False
        return list.__contains__(self, key)

    __hash__ = None

    def __repr__(self) -> str:
        inner = ", ".join(f"({k!r}, {redacted_repr(k, v)})" for k, v in _list_iter(self))
        suffix = ", read_only=True" if self._read_only else ""
        return f"Headers([{inner}]{suffix})"

    # -- the record-v2 byte form (KIP-82 ``Headers(byte[])`` / ``asBytes()``) ---------------

    def encoded_size(self) -> int:
        """Bytes these headers add to a record-batch v2 record (count included).

        >>> Headers([("foo", b"value"), ("bar", None)]).encoded_size()
        16

        Raises ValueError for a key that is not encodable as UTF-8.
        """
        return block_size(list.copy(self))

    def to_bytes(self) -> bytes:
        """Encode as the record-batch v2 header section (Kafka's ``DefaultRecord``).

        >>> Headers([("foo", b"value"), ("bar", None)]).to_bytes().hex(" ")
        '04 06 66 6f 6f 0a 76 61 6c 75 65 06 62 61 72 01'

        Raises ValueError for a key that is not encodable as UTF-8 (a lone surrogate).
        """
        return encode_block(list.copy(self))

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


_new_headers: Callable[[type[Headers]], Headers] = list.__new__
"""``_new_headers(Headers)``: an empty Headers, its fields not set (``__init__`` not run)."""


def trusted(
    items: Iterable[Header] | Iterable[tuple[str, bytes | None]], *, read_only: bool
) -> Headers:
    """Headers over pairs that are already valid (decoded, or from librdkafka), unchecked.

    No check is made: the caller vouches for ``(str, bytes | None)`` pairs with non-empty
    keys. Read-only headers may hold plain tuples (made ``Header`` when read); writable ones
    always hold ``Header`` items, so every later edit keeps them uniform.
    """
    h = _new_headers(Headers)
    if read_only:
        _list_extend(h, items)
        if h and type(_list_getitem(h, 0)) is Header:
            _uniform(h)
    else:
        _list_extend(h, [_as_header(x) for x in items])
    h._read_only = read_only
    return h


def _uniform(h: Headers) -> None:
    """Keep the rule :meth:`Headers.__iter__` reads by, for read-only ``h`` whose first pair
    is a :class:`Header` (its callers look first): when the last is one too, every pair is
    (else a plain tuple between them would be handed out as it is). A list mixing both
    shapes is made all :class:`Header`; librdkafka's pairs are plain tuples, never checked."""
    if type(_list_getitem(h, -1)) is Header and not all(type(x) is Header for x in _list_iter(h)):
        _list_setitem(h, slice(None), [_as_header(x) for x in _list_iter(h)])


def pairs_of(headers: Headers) -> list[tuple[str, bytes | None]]:
    """``headers`` themselves, typed as confluent-kafka's list of pairs (no copy).

    For handing closed headers to librdkafka and to size checks. Iterating a ``Headers``
    makes each pair a :class:`Header`; :func:`pairs` iterates the stored pairs as they are.
    """
    return headers


def plain_pairs(headers: Headers) -> Headers:
    """Closed ``headers`` with their pairs stored as plain tuples, in place; returned.

    For headers kept alive until librdkafka reports their record (a delivery report holds
    them): the garbage collector stops tracking a plain tuple of ``str`` and ``bytes`` (never
    a :class:`Header`, a tuple subclass), so every record in flight keeps fewer objects for
    each collection to scan. Reading them makes each a :class:`Header` again, as for
    received headers. Writable headers are left as they are (they always hold Headers).
    """
    if headers._read_only:
        _list_setitem(headers, slice(None), list(map(tuple, _list_iter(headers))))
    return headers


def received(items: Iterable[tuple[str, bytes | None]]) -> Headers:
    """Read-only Headers over pairs already valid (a received record's list from librdkafka, or
    the snapshot a delivery report kept), unchecked.

    The pairs are not copied one by one nor made :class:`Header` (that happens when read);
    this is the whole per-record cost of giving a consumed record its Headers.
    """
    h = _new_headers(Headers)
    _list_extend(h, items)
    if h and type(_list_getitem(h, 0)) is Header:  # never from librdkafka (plain tuples)
        _uniform(h)
    h._read_only = True
    return h


def received_all(
    lists: list[list[tuple[str, bytes | None]] | None],
) -> tuple[list[Headers | None], int]:
    """:func:`received` of each list of a batch, in one call: ``None`` for ``None`` or empty.

    Returns the Headers and how many entries are ``None`` (records without headers, or
    others the caller decides about).
    """
    out: list[Headers | None] = []
    append = out.append
    new = _new_headers
    extend = _list_extend
    missing = 0
    for items in lists:
        if items:
            h = new(Headers)
            extend(h, items)
            if type(items[0]) is Header:  # never from librdkafka (plain tuples)
                _uniform(h)
            h._read_only = True
            append(h)
        else:
            append(None)
            missing += 1
    return out, missing


def _restore(items: list[Header], read_only: bool) -> Headers:
    """Unpickle :class:`Headers` (see ``__reduce__``)."""
    return trusted(items, read_only=read_only)
