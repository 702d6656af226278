"""One source record made ready for the target: its hops decided, its route, its headers.

Headers are copied byte for byte (order, duplicates, null values); the origin headers are
appended at the first hop, and the hops header is extended where it stands.
"""

from __future__ import annotations

from kheaders.mirror._provenance import (
    HOPS,
    ORIGIN_CLUSTER,
    ORIGIN_OFFSET,
    RefusedHopsError,
    next_hops,
    origin_headers,
    read_hops,
)
from kheaders.mirror._routes import RoutingTable

HeaderList = list[tuple[str, bytes | None]]

LOOP = "loop"
"""The route name of a record that has already been in the target cluster."""


class Copier:
    """Decides, for a record read from ``source_id``, what goes to ``target_id``."""

    __slots__ = ("_first_hop", "_origins", "_watch", "source_id", "table", "target_id")

    def __init__(self, table: RoutingTable, source_id: str, target_id: str) -> None:
        self.table = table
        self.source_id = source_id
        self.target_id = target_id
        self._watch = table.keys | {HOPS, ORIGIN_CLUSTER}
        self._first_hop = (HOPS, next_hops((), source_id, target_id))
        self._origins: dict[tuple[str, int], HeaderList] = {}

    def _origin(self, topic: str, partition: int) -> HeaderList:
        """The origin headers but the offset, made once per source partition."""
        found = self._origins.get((topic, partition))
        if found is None:
            found = self._origins[(topic, partition)] = origin_headers(
                self.source_id, topic, partition, 0
            )[:3]
        return found

    def prepare(
        self, topic: str, partition: int, offset: int, headers: HeaderList | None
    ) -> tuple[str, tuple[str, ...], HeaderList]:
        """The route name, the target topics (``()``: nothing to send) and the headers to send.

        A record whose hops already hold the target is not sent (route ``loop``).
        Raises RefusedHopsError for a hops header that is malformed or would grow past its limit.
        """
        last: dict[str, bytes | None] = {}
        hop_values: list[bytes | None] = []
        has_origin = False
        if headers:
            watch, keys = self._watch, self.table.keys
            for key, value in headers:
                if key in watch:
                    if key == HOPS:
                        hop_values.append(value)
                    elif key == ORIGIN_CLUSTER:
                        has_origin = True
                    if key in keys:
                        last[key] = value
        hops = read_hops(hop_values) if hop_values else ()
        if hops and self.target_id in hops:
            return LOOP, (), []
        route, targets = self.table.decide_last(topic, last)
        if not targets:
            return route, (), []
        if hop_values:
            hops_value = next_hops(hops, self.source_id, self.target_id)
            out = [(HOPS, hops_value) if k == HOPS else (k, v) for k, v in headers or ()]
        elif has_origin:
            out = [*(headers or ()), self._first_hop]
        else:
            out = [
                *(headers or ()),
                *self._origin(topic, partition),
                (ORIGIN_OFFSET, b"%d" % offset),
                self._first_hop,
            ]
        return route, targets, out


__all__ = ["Copier", "RefusedHopsError"]
