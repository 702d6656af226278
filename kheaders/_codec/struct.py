"""Evolvable structured header values: KIP-482 tagged fields applied to one header value.

A :class:`TaggedStruct` subclass declares its fields in order. Wire form::

    version (unsigned varint)
    required fields, in declaration order (those with ``since <= version``)
    tagged-field section: tagged fields whose value differs from their default,
                          plus every unknown tag this object was decoded with

Evolution rules (as in Kafka): add optional data as new ``tagged`` fields (any reader copes;
readers that do not know a tag keep its bytes and write them back); a new required field needs
a higher class ``version`` and a ``since`` on the field, and readers of older versions then
refuse the newer bytes with a clear DecodeError. Never reuse a tag or change a field's type.

>>> from kheaders.values import STRING, INT32
>>> class Audit(TaggedStruct, version=1):
...     user = field(STRING)
...     region = tagged(0, STRING, default=None)
>>> Audit(user="ann").to_bytes().hex(" ")
'01 04 61 6e 6e 00'
>>> Audit.from_bytes(Audit(user="ann", region="eu").to_bytes())
Audit(user='ann', region='eu')
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar, overload

from kheaders._codec.compact_types import Buffer, read_compact_bytes, write_compact_bytes
from kheaders._codec.fieldtypes import FieldType, WireType
from kheaders._codec.tagged import tagged_field_spans, write_tagged_fields
from kheaders._codec.varint import _decode_unsigned, write_unsigned_varint
from kheaders._errors import DecodeError

T = TypeVar("T")
S = TypeVar("S", bound="TaggedStruct")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""Marks a required field without a default."""


class Field(Generic[T]):
    """One declared field (made by :func:`field` or :func:`tagged`); a descriptor on the class."""

    __slots__ = ("default", "name", "since", "tag", "type")

    def __init__(self, type_: WireType[T], default: T, tag: int | None, since: int) -> None:
        if not (callable(getattr(type_, "write", None)) and callable(getattr(type_, "read", None))):
            raise TypeError(
                f"field type must be a wire type such as STRING, INT32 or LONG, got {type_!r}"
                " (TEXT and JSON fill a whole header: use STRING, or BYTES holding JSON)"
            )
        self.type = type_
        self.default = default
        self.tag = tag
        self.since = since
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> Field[T]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...
    def __get__(self, obj: object, owner: type) -> Field[T] | T:
        if obj is None:
            return self
        value: T = obj.__dict__[self.name]
        return value

    def __set__(self, obj: object, value: T) -> None:
        obj.__dict__[self.name] = value

    def initial(self) -> T:
        """The default value, copied when it is a list (so instances never share one)."""
        default = self.default
        if isinstance(default, list):
            return default.copy()  # type: ignore[return-value]
        return default

    def __repr__(self) -> str:
        where = f"tag {self.tag}" if self.tag is not None else f"since v{self.since}"
        return f"<field {self.name}: {self.type.name}, {where}, default {self.default!r}>"


def field(type_: WireType[T], *, default: T = MISSING, since: int = 0) -> Field[T]:
    """Declare a required field, written in declaration order in every version ``>= since``.

    A field added in a later version (``since > 0``) needs a ``default``: it is what readers
    see in bytes of older versions. Raises TypeError for a type that is not a FieldType.
    """
    if since < 0:
        raise ValueError(f"since must be >= 0, got {since}")
    return Field(type_, default, None, since)


@overload
def tagged(tag: int, type_: WireType[T], *, default: None = None) -> Field[T | None]: ...
@overload
def tagged(tag: int, type_: WireType[T], *, default: T) -> Field[T]: ...
def tagged(tag: int, type_: WireType[T], *, default: T | None = None) -> Field[Any]:
    """Declare an optional tagged field: written only when its value differs from ``default``.

    Raises ValueError for a tag outside ``0..2**31-1``, TypeError for a bad type.
    """
    if type(tag) is not int or not 0 <= tag < 2**31:
        raise ValueError(f"tag must be an int in 0..2**31-1, got {tag!r}")
    return Field(type_, default, tag, 0)


class StructCodec(Generic[S]):
    """The :class:`~kheaders.values.ValueCodec` of one struct class (``MyStruct.codec``)."""

    __slots__ = ("cls", "name")

    def __init__(self, cls: type[S]) -> None:
        self.cls = cls
        self.name = f"struct:{cls.__name__}"

    def encode(self, value: S) -> bytes:
        """``value.to_bytes()``. Raises TypeError for another type, ValueError as to_bytes."""
        if not isinstance(value, self.cls):
            raise TypeError(f"{self.name} value must be {self.cls.__name__}, got {value!r}")
        return value.to_bytes()

    def decode(self, data: bytes) -> S:
        """``cls.from_bytes(data)``. Raises DecodeError."""
        return self.cls.from_bytes(data)

    def __repr__(self) -> str:
        return f"{self.cls.__name__}.codec"


class _CodecAccessor:
    """``MyStruct.codec``: the class's :class:`StructCodec`, typed for that class."""

    def __get__(self, obj: object, owner: type[S]) -> StructCodec[S]:
        codec: StructCodec[S] = owner.__dict__["_codec"]
        return codec


class TaggedStruct:
    """Base of declarative, versioned header structs; subclass with ``version=N`` (default 0).

    Instances are built with keyword arguments (``Audit(user="ann")``); fields not given take
    their defaults. Decoded objects remember the tags they did not know (``unknown_tags``)
    and the version they were written in, and :meth:`to_bytes` writes both back.

    Raises TypeError at class creation for clashing tags or a late field without default.
    """

    _fields: ClassVar[tuple[Field[Any], ...]] = ()
    _required: ClassVar[tuple[Field[Any], ...]] = ()
    _tagged: ClassVar[dict[int, Field[Any]]] = {}
    _codec: ClassVar[StructCodec[Any]]
    VERSION: ClassVar[int] = 0
    codec: ClassVar[_CodecAccessor] = _CodecAccessor()

    unknown_tags: dict[int, bytes]
    wire_version: int | None

    def __init_subclass__(cls, version: int | None = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if version is not None:
            if type(version) is not int or version < 0:
                raise TypeError(f"{cls.__name__}: version must be an int >= 0, got {version!r}")
            cls.VERSION = version
        own = [v for v in vars(cls).values() if isinstance(v, Field)]
        fields = (*cls._fields, *own)
        tags: dict[int, Field[Any]] = {}
        for f in fields:
            if f.name.startswith("_") or f.name in _RESERVED:
                raise TypeError(f"{cls.__name__}: field name {f.name!r} is reserved")
            if f.tag is not None:
                if f.tag in tags:
                    raise TypeError(
                        f"{cls.__name__}: tag {f.tag} used by both {tags[f.tag].name!r}"
                        f" and {f.name!r}"
                    )
                tags[f.tag] = f
            elif f.since > cls.VERSION:
                raise TypeError(
                    f"{cls.__name__}.{f.name}: since={f.since} is above the class version"
                    f" {cls.VERSION}"
                )
            elif f.since > 0 and f.default is MISSING:
                raise TypeError(
                    f"{cls.__name__}.{f.name}: a field added in version {f.since} needs a"
                    " default (what older bytes decode to)"
                )
        cls._fields = fields
        cls._required = tuple(f for f in fields if f.tag is None)
        cls._tagged = dict(sorted(tags.items()))
        cls._codec = StructCodec(cls)

    def __init__(self, **values: object) -> None:
        """Set every field from ``values`` or its default.

        Raises TypeError for a missing required field or an unknown name.
        """
        state = self.__dict__
        for f in self._fields:
            if f.name in values:
                state[f.name] = values.pop(f.name)
            elif f.default is MISSING:
                raise TypeError(f"{type(self).__name__}() missing required field {f.name!r}")
            else:
                state[f.name] = f.initial()
        if values:
            raise TypeError(f"{type(self).__name__}() got unknown fields {sorted(values)}")
        state["unknown_tags"] = {}
        state["wire_version"] = None

    # -- encoding --------------------------------------------------------------------------

    def to_bytes(self, version: int | None = None) -> bytes:
        """Encode this struct; ``version`` defaults to the one it was decoded from, else VERSION.

        Raises ValueError for a version above the class's, or when a field that does not
        exist in ``version`` holds a non-default value; TypeError/ValueError (naming the
        field) for a value its type cannot hold.
        """
        cls = type(self)
        if version is None:
            version = self.wire_version if self.wire_version is not None else cls.VERSION
        if not 0 <= version <= cls.VERSION:
            raise ValueError(f"{cls.__name__} cannot be written as version {version}")
        state = self.__dict__
        parts = [write_unsigned_varint(version)]
        for f in cls._required:
            value = state[f.name]
            if f.since > version:
                if value != f.default:
                    raise ValueError(
                        f"{cls.__name__}.{f.name} is not in version {version} (added in"
                        f" {f.since}) but holds {value!r}"
                    )
                continue
            parts.append(self._write(f, value))
        section = dict(self.unknown_tags)
        for tag, f in cls._tagged.items():
            value = state[f.name]
            if value != f.default:
                section[tag] = self._write(f, value)
        parts.append(write_tagged_fields(section))
        return b"".join(parts)

    def _write(self, f: Field[Any], value: object) -> bytes:
        try:
            return f.type.write(value)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{type(self).__name__}.{f.name}: {exc}") from exc

    # -- decoding --------------------------------------------------------------------------

    @classmethod
    def from_bytes(cls: type[S], data: Buffer) -> S:
        """Decode bytes written by this struct (any version up to VERSION, any tags).

        Raises DecodeError (with the offset) on malformed input, bytes left over, or a version
        newer than this class knows.
        """
        obj, pos = cls.read(data, 0)
        if pos != len(data):
            raise DecodeError(f"{len(data) - pos} bytes left after {cls.__name__}", pos)
        return obj

    @classmethod
    def read(cls: type[S], data: Buffer, offset: int = 0) -> tuple[S, int]:
        """Decode one struct at ``offset``; return ``(struct, next_offset)``.

        Raises DecodeError as :meth:`from_bytes` (bytes after the struct are allowed).
        """
        version, pos = _decode_unsigned(data, offset, 5)
        if version > cls.VERSION:
            raise DecodeError(
                f"{cls.__name__} bytes are version {version}; this reader knows up to"
                f" {cls.VERSION} (add new fields as tagged fields to stay readable)",
                offset,
            )
        obj = cls.__new__(cls)
        state = obj.__dict__
        for f in cls._required:
            if f.since > version:
                state[f.name] = f.initial()
                continue
            state[f.name], pos = f.type.read(data, pos)
        spans, pos = tagged_field_spans(data, pos)
        for tag, f in cls._tagged.items():
            span = spans.pop(tag, None)
            if span is None:
                state[f.name] = f.initial()
                continue
            start, end = span
            raw = data[start:end]  # the field's own bytes: it may not read past them
            try:
                value, used = f.type.read(raw, 0)
            except DecodeError as exc:
                raise exc.shifted(start) from exc  # offsets absolute in ``data``
            if used != len(raw):
                raise DecodeError(
                    f"{cls.__name__}.{f.name} (tag {tag}): {len(raw) - used} bytes left over",
                    start + used,
                )
            state[f.name] = value
        state["unknown_tags"] = {tag: bytes(data[a:b]) for tag, (a, b) in spans.items()}
        state["wire_version"] = version
        return obj, pos

    # -- value semantics -------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        mine, theirs = self.__dict__, other.__dict__
        return all(mine[f.name] == theirs[f.name] for f in self._fields) and (
            mine["unknown_tags"] == theirs["unknown_tags"]
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        state = self.__dict__
        shown = [
            f"{f.name}={state[f.name]!r}"
            for f in self._fields
            if f.tag is None or state[f.name] != f.default
        ]
        if state["unknown_tags"]:
            shown.append(f"unknown_tags={state['unknown_tags']!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


_RESERVED = frozenset(dir(TaggedStruct)) | {"unknown_tags", "wire_version"}


def struct_type(cls: type[S]) -> FieldType[S]:
    """A nested tagged struct, written as COMPACT_BYTES holding its own versioned form.

    The length prefix lets the nested struct evolve on its own (new versions, new tags).
    """
    name = f"struct[{cls.__name__}]"

    def write(value: S) -> bytes:
        if not isinstance(value, cls):
            raise TypeError(f"{name} value must be {cls.__name__}, got {type(value).__name__}")
        return write_compact_bytes(value.to_bytes())

    def read(data: Buffer, offset: int) -> tuple[S, int]:
        raw, pos = read_compact_bytes(data, offset)
        if raw is None:
            raise DecodeError(f"null where a non-null {name} is required", offset)
        try:
            return cls.from_bytes(raw), pos
        except DecodeError as exc:
            raise exc.shifted(pos - len(raw)) from exc  # offsets absolute in ``data``

    return FieldType(name, write, read)
