"""Message ids: UUIDv7 (RFC 9562) as 16 bytes in the ``kheaders.message.id`` header."""

from __future__ import annotations

import os
import time

MESSAGE_ID = "kheaders.message.id"
"""The header holding a record's message id: a UUIDv7, its 16 bytes (big-endian)."""


def uuid7_bytes() -> bytes:
    """A fresh UUIDv7 as 16 bytes: 48 bits of Unix milliseconds, then 74 random bits.

    >>> a = uuid7_bytes(); len(a), a[6] >> 4, a[8] >> 6
    (16, 7, 2)

    Ids made in the same millisecond are unique (random bits), not ordered among themselves.
    """
    rand = bytearray(os.urandom(10))
    rand[0] = 0x70 | (rand[0] & 0x0F)  # version 7
    rand[2] = 0x80 | (rand[2] & 0x3F)  # variant 0b10
    return (time.time_ns() // 1_000_000).to_bytes(6, "big") + bytes(rand)
