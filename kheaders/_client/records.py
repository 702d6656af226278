"""The objects interceptors and Java-style callbacks receive: ProducerRecord, RecordMetadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kheaders._model.headers import Headers, HeaderTypes


@dataclass(slots=True, init=False)
class ProducerRecord:
    """A record on its way to Kafka, as producer interceptors and serializers see it.

    ``headers`` is always a :class:`Headers` (writable until the producer hands the record to
    librdkafka): any other accepted shape is copied into one (``None``: no headers).
    ``key``/``value`` are the application's objects until the serializers run.
    ``partition``/``timestamp`` are ``None`` when librdkafka chooses them.

    Raises what :class:`Headers` raises for headers it cannot hold.
    """

    topic: str
    value: Any
    key: Any
    headers: Headers
    partition: int | None
    timestamp: int | None

    def __init__(  # noqa: PLR0917 - the fields, in order
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        headers: HeaderTypes = None,
        partition: int | None = None,
        timestamp: int | None = None,
    ) -> None:
        self.topic = topic
        self.value = value
        self.key = key
        self.headers = headers if type(headers) is Headers else Headers(headers)
        self.partition = partition
        self.timestamp = timestamp


@dataclass(frozen=True, slots=True, init=False)
class RecordMetadata:
    """Where a record landed (or was headed, when sending failed).

    ``partition`` is ``-1`` and ``offset`` is ``-1`` while unknown (e.g. ``produce`` failed
    before librdkafka chose a partition). ``timestamp`` is in milliseconds, or ``None``.

    ``latency`` (not in Java's class) is the delivery latency in seconds: from ``produce`` to
    the delivery report, as librdkafka measured it (``Message.latency()``, for failed
    deliveries too); for a record refused before librdkafka took it, the time the producer
    spent on it until the refusal; ``None`` when unknown (metadata built by other code). A
    measurement, not part of where the record landed: equality ignores it.
    """

    topic: str
    partition: int = -1
    offset: int = -1
    timestamp: int | None = None
    serialized_key_size: int = -1
    serialized_value_size: int = -1
    latency: float | None = field(default=None, compare=False)

    def __init__(  # noqa: PLR0917 - the fields, in order (Java's, then latency)
        self,
        topic: str,
        partition: int = -1,
        offset: int = -1,
        timestamp: int | None = None,
        serialized_key_size: int = -1,
        serialized_value_size: int = -1,
        latency: float | None = None,
    ) -> None:
        # frozen: set as the dataclass' own __init__ would, written out so that the compiled
        # core compiles it (a delivery report builds one per record)
        set_field = object.__setattr__
        set_field(self, "topic", topic)
        set_field(self, "partition", partition)
        set_field(self, "offset", offset)
        set_field(self, "timestamp", timestamp)
        set_field(self, "serialized_key_size", serialized_key_size)
        set_field(self, "serialized_value_size", serialized_value_size)
        set_field(self, "latency", latency)
