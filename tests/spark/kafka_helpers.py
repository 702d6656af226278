"""Small confluent-kafka helpers for the Spark tests: produce known records, read them back."""

from __future__ import annotations

from confluent_kafka import Consumer, Message, Producer, TopicPartition

Headers = list[tuple[str, bytes | None]] | None


def produce(
    bootstrap: str,
    topic: str,
    records: list[tuple[int, bytes | None, bytes | None, Headers]],
) -> None:
    """Produce (partition, key, value, headers) records and wait for every delivery."""
    failures: list[str] = []

    def report(err: object, msg: Message) -> None:
        if err is not None:
            failures.append(str(err))

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition, key, value, headers in records:
        producer.produce(
            topic, value, key, partition=partition, headers=headers, on_delivery=report
        )
    assert producer.flush(30) == 0
    assert not failures, failures


def consume_all(bootstrap: str, topic: str, partitions: int, expected: int) -> list[Message]:
    """Read ``expected`` records from every partition of ``topic`` by assign(), in order."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "kheaders-spark-tests",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[Message] = []
    try:
        for _ in range(60):
            out.extend(m for m in consumer.consume(1000, timeout=0.5) if m.error() is None)
            if len(out) >= expected:
                break
    finally:
        consumer.close()
    return sorted(out, key=lambda m: (m.partition(), m.offset()))
