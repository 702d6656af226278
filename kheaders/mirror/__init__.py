"""Mirroring between clusters: header routing, provenance, loop-free active-active.

``Mirror`` copies records from one cluster to another byte for byte, routed by
``RoutingTable``/``Route`` rules on headers; ``Deduplicator`` drops the duplicates at-least-once
delivery can leave; ``mirror_with_spark`` runs the same rules as a Spark job. See
docs/mirror.md.
"""

from kheaders import _public
from kheaders.mirror._dedup import Deduplicator
from kheaders.mirror._ids import MESSAGE_ID, uuid7_bytes
from kheaders.mirror._metrics import MirrorStats
from kheaders.mirror._mirror import SOURCE_DEFAULTS, TARGET_DEFAULTS, Mirror
from kheaders.mirror._provenance import (
    HOPS,
    MAX_HOPS,
    MAX_HOPS_BYTES,
    ORIGIN_CLUSTER,
    ORIGIN_OFFSET,
    ORIGIN_PARTITION,
    ORIGIN_TOPIC,
    PROVENANCE_HEADERS,
    read_hops,
)
from kheaders.mirror._routes import SAME_TOPIC, Route, RoutingTable
from kheaders.mirror._rulefile import load_rules, table_from_mapping
from kheaders.mirror._spark import mirror_with_spark, routing_sql

__all__ = [
    "HOPS",
    "MAX_HOPS",
    "MAX_HOPS_BYTES",
    "MESSAGE_ID",
    "ORIGIN_CLUSTER",
    "ORIGIN_OFFSET",
    "ORIGIN_PARTITION",
    "ORIGIN_TOPIC",
    "PROVENANCE_HEADERS",
    "SAME_TOPIC",
    "SOURCE_DEFAULTS",
    "TARGET_DEFAULTS",
    "Deduplicator",
    "Mirror",
    "MirrorStats",
    "Route",
    "RoutingTable",
    "load_rules",
    "mirror_with_spark",
    "read_hops",
    "routing_sql",
    "table_from_mapping",
    "uuid7_bytes",
]
_public.claim(__name__, globals())
