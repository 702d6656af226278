"""Interceptors and serializers that the client tests name by dotted path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kheaders import Headers, ProducerRecord, RecordMetadata

events: list[tuple[str, str]] = []
"""(class name, event) in the order they happened, across all instances; tests clear it."""


class Recorder:
    """Records what it sees; stamps each record with a header named after its tag."""

    instances: ClassVar[list[Recorder]] = []

    def __init__(self, tag: str = "rec") -> None:
        self.tag = tag
        self.config: Mapping[str, object] | None = None
        self.sent: list[ProducerRecord] = []
        self.acks: list[tuple[RecordMetadata, Any, Headers]] = []
        self.consumed: list[list[Any]] = []
        self.commits: list[list[Any]] = []
        self.closed = 0
        Recorder.instances.append(self)

    def configure(self, config: Mapping[str, object]) -> None:
        self.config = config
        events.append((type(self).__name__, "configure"))

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        self.sent.append(record)
        record.headers.add(self.tag, b"1")
        return record

    def on_acknowledgement(self, metadata: RecordMetadata, error: Any, headers: Headers) -> None:
        self.acks.append((metadata, error, headers))

    def on_consume(self, messages: list[Any]) -> list[Any]:
        self.consumed.append(list(messages))
        return messages

    def on_commit(self, offsets: list[Any]) -> None:
        self.commits.append(list(offsets))

    def close(self) -> None:
        self.closed += 1
        events.append((type(self).__name__, "close"))


class SecondRecorder(Recorder):
    """Another class, so that order across classes can be seen."""

    def __init__(self) -> None:
        super().__init__("second")


class BadConfigure:
    """Its configure() always fails."""

    def configure(self, config: Mapping[str, object]) -> None:
        raise RuntimeError("missing setting x.y")

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        return record

    def close(self) -> None:
        events.append((type(self).__name__, "close"))


class Misspelled:
    """Implements on_sned instead of on_send."""

    def on_sned(self, record: ProducerRecord) -> ProducerRecord:
        return record


class Utf8Serializer:
    """str -> UTF-8; adds a content-type header (serializers see the writable headers)."""

    def serialize(self, topic: str, headers: Headers, data: Any) -> bytes | None:
        if data is None:
            return None
        headers.add("content-type", b"text/plain")
        return str(data).encode("utf-8")


class Utf8Deserializer:
    """UTF-8 -> str; fails (UnicodeDecodeError) on bytes that are not UTF-8."""

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> Any:
        return None if data is None else data.decode("utf-8")
