"""The record-batch v2 header section, byte-exact with Kafka's ``DefaultRecord``.

``count`` (zigzag varint), then per header: key length (varint), UTF-8 key, value length
(varint, ``-1`` for a null value) and the value bytes. These helpers work on lists of
``(key, value)`` pairs that are already valid; :class:`~kheaders.Headers` and
:mod:`kheaders.wire` are their public faces.
"""

from __future__ import annotations

from collections.abc import Sequence

from kheaders._codec.varint import _SMALL, read_varint, varint_size, write_varint
from kheaders._errors import DecodeError
from kheaders._model.header import Header

_new_header = tuple.__new__
_SMALL_ZIGZAG = len(_SMALL) >> 1  # lengths below this have a pre-encoded zigzag varint

# key -> its encoded length + UTF-8 bytes; header keys repeat across records.
_KEY_PREFIX: dict[str, bytes] = {}
_KEY_PREFIX_MAX = 4096


def _key_prefix(key: str) -> bytes:
    try:
        kb = key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"header key {key!r} is not encodable as UTF-8: {exc.reason}") from exc
    n = len(kb)
    prefix = (_SMALL[n << 1] if n < _SMALL_ZIGZAG else write_varint(n)) + kb
    if len(_KEY_PREFIX) >= _KEY_PREFIX_MAX:
        _KEY_PREFIX.clear()
    _KEY_PREFIX[key] = prefix
    return prefix


def encode_block(items: Sequence[tuple[str, bytes | None]]) -> bytes:
    """Encode valid pairs as a header section. Raises ValueError for a key that is not UTF-8."""
    n = len(items)
    parts = [_SMALL[n << 1] if n < _SMALL_ZIGZAG else write_varint(n)]
    extend = parts.extend
    prefixes = _KEY_PREFIX
    for key, value in items:
        prefix = prefixes.get(key) or _key_prefix(key)  # a prefix is never empty
        if value is None:
            extend((prefix, b"\x01"))
        else:
            n = len(value)
            extend((prefix, _SMALL[n << 1] if n < _SMALL_ZIGZAG else write_varint(n), value))
    return b"".join(parts)


def block_size(items: Sequence[tuple[str, bytes | None]]) -> int:
    """The exact length :func:`encode_block` gives for ``items``."""
    size = varint_size(len(items))
    prefixes = _KEY_PREFIX
    for key, value in items:
        size += len(prefixes.get(key) or _key_prefix(key))
        size += 1 if value is None else len(value) + varint_size(len(value))
    return size


def decode_block(view: bytes, pos: int) -> tuple[list[Header], int]:  # noqa: PLR0915 (inlined hot loop)
    """Decode a header section starting at ``pos``; return ``(headers, next_offset)``.

    Raises DecodeError (with the offset) on truncated input, a negative count or length, a
    count or length larger than the bytes left, or a key that is not UTF-8.
    """
    end = len(view)
    if pos >= end:
        raise DecodeError("truncated header section: no header count", pos)
    start = pos
    b = view[pos]
    if b < 0x80:
        count = (b >> 1) ^ -(b & 1)
        pos += 1
    else:
        count, pos = read_varint(view, pos)
    if count < 0:
        raise DecodeError(f"negative header count {count}", start)
    # Each header takes at least 2 bytes: a count larger than that is a lie, fail fast.
    if count > (end - pos) >> 1:
        raise DecodeError(f"header count {count} exceeds the {end - pos} bytes left", start)
    items: list[Header] = []
    append = items.append
    new, header = _new_header, Header
    at = pos
    try:
        for _ in range(count):
            at = pos
            b = view[pos]
            if b < 0x80:
                klen = (b >> 1) ^ -(b & 1)
                pos += 1
            elif view[pos + 1] < 0x80:
                b = (b & 0x7F) | (view[pos + 1] << 7)
                klen = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                klen, pos = read_varint(view, pos)
            kend = pos + klen
            if klen < 0 or kend > end:
                why = "is negative" if klen < 0 else f"runs past the end (only {end - pos} left)"
                raise DecodeError(f"header key length {klen} {why}", at)
            at = pos
            key = view[pos:kend].decode("utf-8")
            at = kend
            b = view[kend]
            if b < 0x80:
                vlen = (b >> 1) ^ -(b & 1)
                pos = kend + 1
            elif view[kend + 1] < 0x80:
                b = (b & 0x7F) | (view[kend + 1] << 7)
                vlen = (b >> 1) ^ -(b & 1)
                pos = kend + 2
            else:
                vlen, pos = read_varint(view, kend)
            if vlen < 0:
                if vlen != -1:
                    raise DecodeError(f"invalid length {vlen} for header {key!r}", at)
                append(new(header, (key, None)))
            else:
                vend = pos + vlen
                if vend > end:
                    raise DecodeError(
                        f"header {key!r}: value of {vlen} bytes runs past the end", at
                    )
                append(new(header, (key, view[pos:vend])))
                pos = vend
    except IndexError:
        raise DecodeError("truncated header section", at) from None
    except UnicodeDecodeError as exc:
        raise DecodeError(f"header key is not UTF-8: {exc.reason}", at + exc.start) from exc
    return items, pos
