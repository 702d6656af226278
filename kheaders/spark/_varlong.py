"""Zigzag varlong decoding in Spark SQL (KIP-280 version headers), as a Column and as SQL text.

A zigzag varlong is 1-10 bytes of 7-bit groups, least significant first; every byte but the
last carries the continuation bit 0x80. Spark SQL has no binary-to-long cast, so the value,
padded with zero bytes to 10, is read as two unsigned numbers through ``conv(hex(...))``
(the dearest step): bytes 0-7 as one long, and bytes 8-9 as a short
only for the rare value of 9-10 bytes; every rule is then a mask over the two.

Whole-stage code generation copies an expression wherever it is referenced, except what
common-subexpression elimination catches, and that never looks inside only one branch of a
CASE. So each number is referenced from unconditional places only, and the decoded value is
never wrapped in a CASE. The earlier per-byte form (ten substrings, a CASE per byte) grew a
generated method over HotSpot's 8,000-byte limit, which the JIT never compiles: it ran
interpreted (tests/spark keeps every generated method of these plans under the limit).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as sf

_VARLONG_BYTES = 10
_CONTINUATION_0_7 = 0x8080808080808080 - (1 << 64)  # bit 7 of bytes 0-7, as a signed long
_CHECKED_8_9 = 0x80FE  # byte 8's continuation bit and bits 1-7 of byte 9 (above 64 bits)


def _varlong_flags(n: int) -> int | None:
    """The masked bits (see ``varlong_parts``) that a well-formed ``n``-byte varlong has.

    Bytes ``0..n-2`` carry the continuation bit, byte ``n-1`` and the zero padding do not,
    and a 10th byte holds at most bit 0; None for a length no varlong has.
    """
    if not 1 <= n <= _VARLONG_BYTES:
        return None
    flags = sum(1 << (63 - 8 * i) for i in range(min(n - 1, 8)))
    if n == _VARLONG_BYTES:
        flags |= 0x8000 >> 1  # byte 8 continues into byte 9
    return flags - (1 << 64) if flags >= 1 << 63 else flags


_VARLONG_FLAGS = [_varlong_flags(n) for n in range(_VARLONG_BYTES + 1)]
"""Indexed by the value's length (0-based ``get``; NULL past the end): the expected flags."""


def varlong_parts(value: Column) -> tuple[Column, Column]:
    """``(decoded, well_formed)`` of a whole value read as one zigzag varlong, branch-free.

    ``decoded`` is computed for every value (garbage when malformed); ``well_formed`` is
    true for a valid varlong of 1-10 bytes filling the value, false when malformed, NULL
    when ``value`` is NULL, empty or over 10 bytes. Each of the two numbers is referenced
    from unconditional places only, so common-subexpression elimination evaluates it once.
    """
    n = sf.octet_length(value)
    padded = sf.concat(value, sf.lit(bytearray(_VARLONG_BYTES)))  # bytes past the end: 0
    low = sf.conv(sf.hex(sf.substring(padded, 1, 8)), 16, -10).cast("bigint")  # bytes 0-7
    # bytes 8-9: a second conversion (the dearest step) only for the rare 9-10 byte value
    high_hex = sf.hex(sf.substring(padded, 9, 2))
    high = sf.when(n > 8, sf.conv(high_hex, 16, 10).cast("bigint")).otherwise(
        sf.lit(0).cast("bigint")
    )
    flags = low.bitwiseAND(sf.lit(_CONTINUATION_0_7)).bitwiseOR(
        sf.shiftright(high.bitwiseAND(_CHECKED_8_9), 1)
    )
    expected = sf.get(sf.array(*[sf.lit(f).cast("bigint") for f in _VARLONG_FLAGS]), n)
    raw = sf.lit(0).cast("bigint")
    for i in range(8):
        group = sf.shiftrightunsigned(low, 56 - 8 * i).bitwiseAND(127)
        raw = raw.bitwiseOR(sf.shiftleft(group, 7 * i))
    raw = raw.bitwiseOR(sf.shiftleft(sf.shiftright(high, 8).bitwiseAND(127), 56))
    raw = raw.bitwiseOR(sf.shiftleft(high.bitwiseAND(1), 63))
    decoded = sf.shiftrightunsigned(raw, 1).bitwiseXOR(-raw.bitwiseAND(1))
    return decoded, flags == expected


def varlong_of(value: Column) -> Column:
    """A whole value holding exactly one zigzag varlong (1-10 bytes), or NULL when malformed.

    Malformed: empty, longer than 10 bytes, a continuation bit on the last byte or missing
    on an earlier one, or a 10th byte above 1 (more than 64 bits). Non-minimal encodings
    decode, as in :func:`kheaders.wire.read_varlong`.
    """
    decoded, well_formed = varlong_parts(value)
    # ``| 0`` when well formed, ``| NULL`` (giving NULL) otherwise: no CASE around ``decoded``.
    return decoded.bitwiseOR(sf.when(well_formed, sf.lit(0).cast("bigint")))


def varlong_sql(v: str) -> str:
    """SQL of one zigzag varlong filling the whole binary ``v``, NULL when malformed.

    The same branch-free reading as ``varlong_parts``.
    """
    padded = f"concat({v}, X'{'00' * _VARLONG_BYTES}')"
    low = f"CAST(conv(hex(substring({padded}, 1, 8)), 16, -10) AS BIGINT)"
    high = (
        f"CASE WHEN octet_length({v}) > 8"
        f" THEN CAST(conv(hex(substring({padded}, 9, 2)), 16, 10) AS BIGINT) ELSE 0L END"
    )
    flags = f"(({low} & {_CONTINUATION_0_7}L) | shiftright({high} & {_CHECKED_8_9}, 1))"
    table = ", ".join("CAST(NULL AS BIGINT)" if f is None else f"{f}L" for f in _VARLONG_FLAGS)
    expected = f"get(array({table}), octet_length({v}))"
    groups = [
        f"shiftleft(shiftrightunsigned({low}, {56 - 8 * i}) & 127, {7 * i})" for i in range(8)
    ]
    groups += [f"shiftleft(shiftright({high}, 8) & 127, 56)", f"shiftleft({high} & 1, 63)"]
    raw = f"({' | '.join(groups)})"
    decoded = f"(shiftrightunsigned({raw}, 1) ^ -({raw} & 1))"
    return f"({decoded} | CASE WHEN {flags} = {expected} THEN 0L END)"
