"""One source record made ready for the target: its hops decided, its route, its headers.

Headers are copied byte for byte (order, duplicates, null values); the origin headers are
appended at the first hop, and the hops header is extended where it stands.
"""

from __future__ import annotations

from kheaders._errors import RefusedHopsError
from kheaders.mirror._provenance import (
    HOPS,
    ORIGIN_CLUSTER,
    ORIGIN_OFFSET,
    next_hops,
    origin_headers,
    read_hops,
)
from kheaders.mirror._routes import RoutingTable

HeaderList = list[tuple[str, bytes | None]]

_NONE: dict[str, bytes | None] = {}
"""No header a rule reads (never written to)."""

LOOP = "loop"
"""The route name of a record that has already been in the target cluster."""


class Copier:
    """Decides, for a record read from ``source_id``, what goes to ``target_id``."""

    __slots__ = ("_first_hop", "_origins", "source_id", "table", "target_id")

    def __init__(self, table: RoutingTable, source_id: str, target_id: str) -> None:
        self.table = table
        self.source_id = source_id
        self.target_id = target_id
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
        if not headers:
            route, targets = self.table.decide_last(topic, _NONE)
            return route, targets, self._first_copy(targets, (), topic, partition, offset)
        found = dict(headers)  # the last value of each key
        if HOPS in found or ORIGIN_CLUSTER in found:
            return self._prepare_hopped(topic, partition, offset, headers)
        keys = self.table.keys
        last = found if keys and not keys.isdisjoint(found) else _NONE
        route, targets = self.table.decide_last(topic, last)
        return route, targets, self._first_copy(targets, headers, topic, partition, offset)

    def _first_copy(
        self,
        targets: tuple[str, ...],
        headers: HeaderList | tuple[()],
        topic: str,
        partition: int,
        offset: int,
    ) -> HeaderList:
        """The headers of a record's first hop: its own, then the origin headers and hops."""
        if not targets:
            return []
        return [
            *headers,
            *self._origin(topic, partition),
            (ORIGIN_OFFSET, b"%d" % offset),
            self._first_hop,
        ]

    def _prepare_hopped(
        self, topic: str, partition: int, offset: int, headers: HeaderList
    ) -> tuple[str, tuple[str, ...], HeaderList]:
        """As :meth:`prepare`, for a record that holds a hops or origin header already."""
        last: dict[str, bytes | None] = {}
        hop_values: list[bytes | None] = []
        keys = self.table.keys
        for key, value in headers:
            if key == HOPS:
                hop_values.append(value)
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
            out = [(HOPS, hops_value) if k == HOPS else (k, v) for k, v in headers]
        else:  # the origin headers are there (an earlier mirror without hops): kept
            out = [*headers, self._first_hop]
        return route, targets, out


__all__ = ["Copier", "RefusedHopsError"]
