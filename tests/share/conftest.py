"""Share groups (KIP-932) on the Apache Kafka broker: a fresh group per test, reading from the
earliest record (a share group starts at the log end by default), records produced plainly."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from kheaders import ShareConsumer

Record = tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]
"""(key, value, headers) as produced."""


def configure_group(bootstrap: str, group: str, *, lock_ms: int | None = None) -> None:
    """Set the share group's ``share.auto.offset.reset=earliest`` (and its record lock
    duration) through the admin client's incremental alter configs on the GROUP resource."""
    entries = [
        ConfigEntry(
            "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET
        )
    ]
    if lock_ms is not None:
        entries.append(
            ConfigEntry(
                "share.record.lock.duration.ms",
                str(lock_ms),
                incremental_operation=AlterConfigOpType.SET,
            )
        )
    resource = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=entries)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.incremental_alter_configs([resource])[resource].result(30)


@pytest.fixture
def share_group(bootstrap: str, request: pytest.FixtureRequest) -> Callable[..., str]:
    """``share_group(lock_ms=None) -> group id``: a fresh share group reading from the start."""

    def make(lock_ms: int | None = None) -> str:
        group = f"share-{request.node.name[:40]}-{uuid.uuid4().hex[:8]}"
        configure_group(bootstrap, group, lock_ms=lock_ms)
        return group

    return make


def produce(bootstrap: str, topic: str, records: Iterable[Record]) -> None:
    """Produce ``records`` with plain confluent-kafka, in order, and wait for them all."""
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for key, value, headers in records:
        producer.produce(topic, value=value, key=key, headers=headers)
    assert producer.flush(30) == 0


def poll_until(
    consumer: ShareConsumer,
    enough: Callable[[list[confluent_kafka.Message]], bool],
    *,
    on_batch: Callable[[list[confluent_kafka.Message]], None] | None = None,
    deadline: float = 60.0,
) -> list[confluent_kafka.Message]:
    """Poll until ``enough(all records so far)``; ``on_batch`` sees (and acknowledges) each
    non-empty batch. Fails after ``deadline`` seconds."""
    seen: list[confluent_kafka.Message] = []
    end = time.monotonic() + deadline
    while not enough(seen):
        assert time.monotonic() < end, f"only {len(seen)} records within {deadline} s"
        batch = [m for m in consumer.poll(0.5) if m.error() is None]
        if batch:
            seen.extend(batch)
            if on_batch is not None:
                on_batch(batch)
    return seen
