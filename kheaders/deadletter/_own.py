"""kheaders' own dead-letter header names (``kheaders.dlt.*``: UTF-8 text, numbers in
decimal; the table is in docs/clients.md, "Dead letters")."""

from __future__ import annotations

PREFIX = "kheaders.dlt."
ORIGINAL_TOPIC = "kheaders.dlt.original.topic"
ORIGINAL_PARTITION = "kheaders.dlt.original.partition"
ORIGINAL_OFFSET = "kheaders.dlt.original.offset"
ORIGINAL_TIMESTAMP = "kheaders.dlt.original.timestamp"
ORIGINAL_TIMESTAMP_TYPE = "kheaders.dlt.original.timestamp.type"
CONSUMER_GROUP = "kheaders.dlt.consumer.group"
ERROR_FIELD = "kheaders.dlt.error.field"
ERROR_TYPE = "kheaders.dlt.error.type"
ERROR_MESSAGE = "kheaders.dlt.error.message"
