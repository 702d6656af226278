"""One source record made ready for the target: its hops decided, its route, its headers.

Headers are copied byte for byte (order, duplicates, null values); the origin headers are
appended at the first hop, and the hops header is extended where it stands.
"""

from __future__ import annotations

from dataclasses import dataclass

from kheaders.mirror._provenance import (
    HOPS,
    ORIGIN_CLUSTER,
    RefusedHopsError,
    next_hops,
    origin_headers,
    read_hops,
)
from kheaders.mirror._routes import RoutingTable

HeaderList = list[tuple[str, bytes | None]]

LOOP = "loop"
"""The route name of a record that has already been in the target cluster."""


@dataclass(frozen=True)
class Copier:
    """Decides, for a record read from ``source_id``, what goes to ``target_id``."""

    table: RoutingTable
    source_id: str
    target_id: str

    def prepare(
        self, topic: str, partition: int, offset: int, headers: HeaderList | None
    ) -> tuple[str, tuple[str, ...], HeaderList]:
        """The route name, the target topics (``()``: nothing to send) and the headers to send.

        A record whose hops already hold the target is not sent (route ``loop``).
        Raises RefusedHopsError for a hops header that is malformed or would grow past its limit.
        """
        wanted = self.table.keys
        last: dict[str, bytes | None] = {}
        hop_values: list[bytes | None] = []
        has_origin = False
        if headers:
            for key, value in headers:
                if key == HOPS:
                    hop_values.append(value)
                elif key == ORIGIN_CLUSTER:
                    has_origin = True
                if key in wanted:
                    last[key] = value
        hops = read_hops(hop_values)
        if self.target_id in hops:
            return LOOP, (), []
        route, targets = self.table.decide_last(topic, last)
        if not targets:
            return route, (), []
        hops_value = next_hops(hops, self.source_id, self.target_id)
        out: HeaderList = list(headers) if headers else []
        if hop_values:
            out = [(HOPS, hops_value) if key == HOPS else (key, v) for key, v in out]
        else:
            if not has_origin:
                out.extend(origin_headers(self.source_id, topic, partition, offset))
            out.append((HOPS, hops_value))
        return route, targets, out


__all__ = ["Copier", "RefusedHopsError"]
