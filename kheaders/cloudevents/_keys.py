"""The binding's opt-in key mapper: the Partitioning extension's ``partitionkey`` as the key."""

from __future__ import annotations

from kheaders.cloudevents._event import event_of

PARTITIONKEY = "partitionkey"


def partition_key(event: object) -> str | None:
    """The ``partitionkey`` attribute of ``event`` (any shape the serializers take) as text,
    for use as the record's key; ``None`` when it has none. The event is not changed.

    >>> partition_key({"specversion": "1.0", "id": "1", "source": "/s", "type": "t",
    ...                "partitionkey": "order-7"})
    'order-7'

    Raises CloudEventError when ``event`` is not a valid CloudEvent.
    """
    value = event_of(event).get(PARTITIONKEY)
    return None if value is None else str(value)
