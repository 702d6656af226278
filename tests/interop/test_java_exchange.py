"""kheaders and the Java client exchange records both ways: headers arrive exactly as sent.

Duplicates, null values, empty values, their order and non-ASCII keys, each seen the same by
the other side's application and by its interceptors (Java's ProducerInterceptor and
ConsumerInterceptor, kheaders' on_send and on_consume).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import Message

from kheaders import Headers, Producer, ProducerRecord
from tests.interop.jvm import Header, Jvm, b64, decoded, events, read_partition0, record_line

pytestmark = pytest.mark.integration

HEADERS: list[Header] = [
    ("dup", b"1"),
    ("nul", None),
    ("empty", b""),
    ("dup", b"2"),
    ("clé-日本", "värde".encode()),
    ("bin", bytes(range(256))),
    ("dup", None),
]
RECORDS: list[tuple[bytes | None, bytes | None, list[Header]]] = [
    (b"k0", b"v0", HEADERS),
    (None, None, [("only", None)]),
    (b"k2", b"", []),
    (b"", b"v3", list(reversed(HEADERS))),
]


def pairs(msg: Message) -> list[Header]:
    """A consumed record's headers as pairs (kheaders' consumer gives read-only Headers)."""
    found = msg.headers()
    assert isinstance(found, Headers)
    return found.to_list()


class Watch:
    """Records what kheaders' hooks saw."""

    def __init__(self) -> None:
        self.sent: list[list[Header]] = []
        self.consumed: list[list[Header]] = []

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        self.sent.append(record.headers.to_list())
        return record

    def on_consume(self, messages: list[Message]) -> list[Message]:
        self.consumed += [pairs(m) for m in messages]
        return messages


def consume(bootstrap: str, topic: str, count: int, watch: Watch) -> list[Message]:
    return read_partition0(bootstrap, topic, count, f"g-{topic}", interceptors=[watch])


def test_kheaders_to_java_and_back_keeps_every_header(
    jvm: Jvm, bootstrap: str, topic_factory: Callable[..., str]
) -> None:
    to_java, to_python = topic_factory(), topic_factory()
    watch = Watch()
    producer = Producer({"bootstrap.servers": bootstrap}, interceptors=[watch])
    for key, value, headers in RECORDS:
        producer.produce(to_java, value, key, headers=headers)
    assert producer.flush(30) == 0
    assert watch.sent == [h for _, _, h in RECORDS]

    # one JVM: the Java producer writes RECORDS to to_python, then the consumer reads to_java
    stdin = "".join(record_line(k, v, h) for k, v, h in RECORDS)
    found = jvm.run("exchange", bootstrap, to_python, to_java, str(len(RECORDS)), stdin=stdin)

    java_seen = [decoded(e["headers"]) for e in events(found, event="on_send")]
    assert java_seen == [h for _, _, h in RECORDS]
    got = events(found, event="record")
    assert [(b64(e["key"]), b64(e["value"]), decoded(e["headers"])) for e in got] == RECORDS
    batches = events(found, event="on_consume")
    in_hook = [decoded(r["headers"]) for e in batches for r in e["records"]]
    assert in_hook == [h for _, _, h in RECORDS]

    back = consume(bootstrap, to_python, len(RECORDS), watch)
    assert [(m.key(), m.value(), pairs(m)) for m in back] == RECORDS
    assert watch.consumed == [h for _, _, h in RECORDS]
