"""A missing dead-letter topic, one answer for every user: created with its source topic's
partition count where the client may create topics, else refused at start with a
ConfigurationError naming it. (The mirror's: tests/mirror/test_cli_mirror.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from confluent_kafka import Message
from confluent_kafka.admin import AdminClient

from kheaders import ConfigurationError, Producer
from kheaders.deadletter import DeadLetterPublisher
from kheaders.processing import RetryTopics
from tests.processing.helpers import Running, config, make, produce, read_all

pytestmark = pytest.mark.integration

REFUSED = "{topic}-dlt!"
"""A dead-letter topic name the broker refuses to create (``!`` is not allowed in one): the
same answer as a client without the permission to create topics gets."""


def _partitions(bootstrap: str, topic: str) -> int | None:
    meta = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    found = meta.topics.get(topic)
    return None if found is None or found.error is not None else len(found.partitions)


def _fails(msg: Message) -> None:
    raise ValueError(f"cannot handle {msg.offset()}")


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_processor_creates_a_missing_dead_letter_topic_with_the_source_partitions(
    bootstrap: str, topic_factory: Callable[..., str], kind: str
) -> None:
    topic = topic_factory(partitions=3)
    assert _partitions(bootstrap, f"{topic}-dlt") is None
    [sent] = produce(bootstrap, topic, [{"value": b"poison", "partition": 2}])
    running = Running(
        make(kind, config(bootstrap), [topic], _fails, dead_letter=True, handle_signals=False)
    )
    try:
        [dead] = read_all(bootstrap, f"{topic}-dlt", 1)
    finally:
        running.stop()
    assert _partitions(bootstrap, f"{topic}-dlt") == 3
    assert (dead.value, dead.partition) == (sent.value, 2)  # the same partition number there


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize(
    ("options", "missing"),
    [
        ({"dead_letter": REFUSED}, "{topic}-dlt!"),
        ({"retry": RetryTopics(delays=[1], create_topics=False)}, "{topic}-dlt"),
    ],
    ids=["cannot-create", "creation-off"],
)
def test_the_processor_refuses_at_start_a_dead_letter_topic_it_cannot_create(
    bootstrap: str,
    topic_factory: Callable[..., str],
    kind: str,
    options: dict[str, object],
    missing: str,
) -> None:
    topic = topic_factory()
    processor = make(kind, config(bootstrap), [topic], _fails, handle_signals=False, **options)
    start: Callable[[], object] = (
        processor.run if kind == "sync" else lambda: asyncio.run(processor.run())  # type: ignore[arg-type]
    )
    with pytest.raises(ConfigurationError, match="dead_letter") as raised:
        start()
    assert repr(missing.replace("{topic}", topic)) in str(raised.value)
    assert _partitions(bootstrap, f"{topic}-dlt") is None


def test_the_publisher_creates_missing_dead_letter_topics_with_the_source_partitions(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    first, second = topic_factory(partitions=2), topic_factory(partitions=4)
    producer = Producer({"bootstrap.servers": bootstrap})
    try:
        publisher = DeadLetterPublisher(producer)
        publisher.prepare({"bootstrap.servers": bootstrap, "acks": "all"}, [first, second])
        assert _partitions(bootstrap, f"{first}-dlt") == 2
        assert _partitions(bootstrap, f"{second}-dlt") == 4
        publisher.prepare({"bootstrap.servers": bootstrap}, [first])  # there now: nothing to do
    finally:
        producer.close(timeout=5)


def test_the_publisher_refuses_a_dead_letter_topic_it_cannot_create(
    bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    topic = topic_factory()
    producer = Producer({"bootstrap.servers": bootstrap})
    try:
        publisher = DeadLetterPublisher(producer, REFUSED)
        with pytest.raises(ConfigurationError, match=rf"'{topic}-dlt!'"):
            publisher.prepare({"bootstrap.servers": bootstrap}, [topic])
    finally:
        producer.close(timeout=5)
