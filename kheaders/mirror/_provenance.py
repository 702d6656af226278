"""Provenance headers: where a record was first written and which clusters it went through.

The origin headers are stamped once, at the first hop, and never changed; the hops header is
extended at each hop. Every value is UTF-8 text, so Spark SQL reads and writes them with
plain string functions (``split``, ``concat``) and people read them in ``kheaders tail``.

The hops header comes from the wire and is untrusted: :func:`read_hops` bounds it and names
what is wrong, and the mirror dead-letters a record whose hops it refuses (never forwards it,
so a malformed header cannot make a loop).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kheaders._errors import ConfigurationError, RefusedHopsError

ORIGIN_CLUSTER = "kheaders.origin.cluster"
ORIGIN_TOPIC = "kheaders.origin.topic"
ORIGIN_PARTITION = "kheaders.origin.partition"
ORIGIN_OFFSET = "kheaders.origin.offset"
HOPS = "kheaders.hops"
PROVENANCE_HEADERS = (ORIGIN_CLUSTER, ORIGIN_TOPIC, ORIGIN_PARTITION, ORIGIN_OFFSET, HOPS)

MAX_HOPS = 16
"""Most cluster ids a hops header may hold (a record that would need more is refused)."""
MAX_HOPS_BYTES = 1024
"""Longest hops value read; a longer one is refused unread."""
MAX_CLUSTER_ID = 64
_CLUSTER_ID = re.compile(rb"[A-Za-z0-9._-]{1,64}")


def check_cluster_id(name: str, what: str) -> str:
    """``name`` when it can be a hop (1-64 of ``A-Z a-z 0-9 . _ -``).

    Raises ConfigurationError naming ``what`` otherwise.
    """
    if not _CLUSTER_ID.fullmatch(name.encode("utf-8", "replace")):
        raise ConfigurationError(
            f"{what}: cluster id {name[:80]!r} cannot be a hop: use 1-{MAX_CLUSTER_ID}"
            " characters of A-Z a-z 0-9 . _ - (configure a name for the cluster)"
        )
    return name


def read_hops(values: Sequence[bytes | None]) -> tuple[str, ...]:
    """The cluster ids of a record's hops header values (none: ``()``).

    Raises RefusedHopsError for more than one hops header, a null value, a value over
    :data:`MAX_HOPS_BYTES`, more than :data:`MAX_HOPS` ids, or an id that is not 1-64 of
    ``A-Z a-z 0-9 . _ -`` (an empty one included).
    """
    if not values:
        return ()
    if len(values) > 1:
        raise RefusedHopsError(f"{len(values)} {HOPS} headers (one expected)")
    value = values[0]
    if value is None:
        raise RefusedHopsError(f"{HOPS} header has a null value")
    if len(value) > MAX_HOPS_BYTES:
        raise RefusedHopsError(f"{HOPS} header is {len(value)} bytes (limit {MAX_HOPS_BYTES})")
    parts = value.split(b",")
    if len(parts) > MAX_HOPS:
        raise RefusedHopsError(f"{HOPS} header holds {len(parts)} hops (limit {MAX_HOPS})")
    for i, part in enumerate(parts):
        if not _CLUSTER_ID.fullmatch(part):
            raise RefusedHopsError(f"{HOPS} header: hop {i} is not a cluster id")
    return tuple(p.decode("ascii") for p in parts)


def next_hops(hops: tuple[str, ...], source: str, target: str) -> bytes:
    """The hops value after copying from ``source`` to ``target``.

    >>> next_hops((), "a", "b"), next_hops(("a", "b"), "b", "c"), next_hops(("x",), "a", "b")
    (b'a,b', b'a,b,c', b'x,a,b')

    Raises RefusedHopsError when the result would exceed :data:`MAX_HOPS`.
    """
    path = hops if hops and hops[-1] == source else (*hops, source)
    path = (*path, target)
    if len(path) > MAX_HOPS:
        raise RefusedHopsError(f"{HOPS}: {len(path)} hops would exceed the limit of {MAX_HOPS}")
    return ",".join(path).encode("ascii")


def origin_headers(
    cluster: str, topic: str, partition: int, offset: int
) -> list[tuple[str, bytes | None]]:
    """The origin headers stamped at the first hop (decimal text for numbers)."""
    return [
        (ORIGIN_CLUSTER, cluster.encode()),
        (ORIGIN_TOPIC, topic.encode()),
        (ORIGIN_PARTITION, b"%d" % partition),
        (ORIGIN_OFFSET, b"%d" % offset),
    ]
