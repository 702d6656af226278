"""The timed read loops, light on imports (the memory child loads only what it reads with)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
from confluent_kafka import OFFSET_BEGINNING, TopicPartition

BATCH = 1000
"""Records asked for per ``consume()`` call."""


def prime(consumer: Any, timeout: float = 30.0) -> None:
    """Wait for the first record (connection, assignment, first fetch), untimed.

    Raises RuntimeError when none arrives within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for msg in consumer.consume(num_messages=1, timeout=0.5):
            if msg.error() is None:
                return
    raise RuntimeError("no record arrived")


def read_raw(consumer: Any, n: int) -> int:
    """Raw loop: read every record's ``headers()``; return how many records had headers."""
    consume = consumer.consume
    got = seen = 0
    while got < n:
        for msg in consume(num_messages=min(BATCH, n - got), timeout=1.0):
            if msg.error() is not None:
                continue
            got += 1
            if msg.headers():
                seen += 1
    return seen


def read_kheaders(consumer: Any, n: int) -> int:
    """kheaders loop: every record's Headers and its trace parent; return how many had one."""
    from kheaders.tracecontext import extract_trace_parent

    consume = consumer.consume
    got = seen = 0
    while got < n:
        for msg in consume(num_messages=min(BATCH, n - got), timeout=1.0):
            if msg.error() is not None:
                continue
            got += 1
            if extract_trace_parent(msg.headers()) is not None:
                seen += 1
    return seen


def read_raw_otel(consumer: Any, n: int) -> int:
    """For context: the raw loop plus OTel's own ``propagate.extract`` per record."""
    from opentelemetry import propagate, trace
    from opentelemetry.instrumentation.confluent_kafka.utils import KafkaContextGetter

    extract = propagate.extract
    getter = KafkaContextGetter()
    get_span = trace.get_current_span
    consume = consumer.consume
    got = seen = 0
    while got < n:
        for msg in consume(num_messages=min(BATCH, n - got), timeout=1.0):
            if msg.error() is not None:
                continue
            got += 1
            if get_span(extract(msg.headers(), getter=getter)).get_span_context().is_valid:
                seen += 1
    return seen


Reader = Callable[[Any, int], int]


def open_consumer(kind: str, config: dict[str, object], topic: str) -> Any:
    """A raw or kheaders consumer assigned to partition 0 of ``topic`` from the beginning.

    ``kind``: ``raw``, ``kheaders``, or ``kheaders-json`` (with ``JsonDeserializer`` values).
    """
    if kind == "kheaders":
        from kheaders import Consumer

        consumer: Any = Consumer(config)
    elif kind == "kheaders-json":
        from kheaders import Consumer, JsonDeserializer

        consumer = Consumer(config, value_deserializer=JsonDeserializer())
    else:
        consumer = confluent_kafka.Consumer(config)
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    return consumer


def read_raw_json_by_hand(consumer: Any, n: int) -> int:
    """By hand: ``json.loads`` of each value and OTel's ``propagate.extract`` of its headers.

    Returns how many records carried a valid trace parent.
    """
    import json

    from opentelemetry import propagate, trace
    from opentelemetry.instrumentation.confluent_kafka.utils import KafkaContextGetter

    loads = json.loads
    extract = propagate.extract
    getter = KafkaContextGetter()
    get_span = trace.get_current_span
    consume = consumer.consume
    got = seen = 0
    while got < n:
        for msg in consume(num_messages=min(BATCH, n - got), timeout=1.0):
            if msg.error() is not None:
                continue
            got += 1
            loads(msg.value())
            if get_span(extract(msg.headers(), getter=getter)).get_span_context().is_valid:
                seen += 1
    return seen


def read_kheaders_json(consumer: Any, n: int) -> int:
    """kheaders: values already decoded by ``JsonDeserializer``; ``extract(msg)`` per record.

    ``extract`` is the tracing interceptors' strict W3C extraction into an OTel context.
    Returns how many records carried a valid trace parent (and a decoded dict value).
    """
    from opentelemetry import trace

    from kheaders.interceptors.tracing import extract

    get_span = trace.get_current_span
    consume = consumer.consume
    got = seen = 0
    while got < n:
        for msg in consume(num_messages=min(BATCH, n - got), timeout=1.0):
            if msg.error() is not None:
                continue
            got += 1
            if type(msg.value()) is dict and get_span(extract(msg)).get_span_context().is_valid:
                seen += 1
    return seen
