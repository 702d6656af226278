"""The record key a protected value is bound to comes from its own record's context, on any
thread: no hand-over between the key and the value serializer that another thread's record
could take."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import kheaders
from kheaders import IntegrityError, SerializationError
from kheaders._client.producer import sender_of
from kheaders.protect import RecordKeySerializer
from tests.protect.helpers import reader, unprotect, writer

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:9", "message.timeout.ms": 1000}
RECORDS = 400


def _captured(producer: kheaders.Producer) -> list[tuple[Any, ...]]:
    """What ``producer`` hands to librdkafka, one tuple per record: (key, value, headers)."""
    handed: list[tuple[Any, ...]] = []
    lock = threading.Lock()

    def hand(topic: str, value: Any, key: Any, *rest: Any) -> None:
        with lock:
            handed.append((key, value, [] if rest[-1] is None else rest[-1].to_list()))

    sender_of(producer).hand = hand
    return handed


@pytest.mark.parametrize("key_serializer", [None, RecordKeySerializer()])
def test_two_threads_producing_bind_each_value_to_its_own_key(key_serializer: object) -> None:
    producer = kheaders.Producer(
        UNREACHABLE, key_serializer=key_serializer, value_serializer=writer()
    )
    handed = _captured(producer)
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def produce(name: str) -> None:
        try:
            start.wait(timeout=30)
            for i in range(RECORDS):
                key = f"{name}-{i}".encode()
                producer.produce("orders", b"value of " + key, key, headers=[("tenant", b"a")])
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=produce, args=(n,)) for n in ("left", "right")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    producer.close(timeout=0)
    assert not failures
    assert len(handed) == 2 * RECORDS
    de = reader()
    for key, value, headers in handed:
        assert unprotect(de, "orders", key, value, headers) == b"value of " + key
        other = key.replace(b"left", b"right") if b"left" in key else key.replace(b"right", b"left")
        with pytest.raises(IntegrityError):  # bound to its key: under another, refused
            unprotect(de, "orders", other, value, headers)


def test_the_key_as_sent_is_bound_a_str_key_as_its_utf8_bytes() -> None:
    producer = kheaders.Producer(UNREACHABLE, value_serializer=writer())
    handed = _captured(producer)
    producer.produce("orders", b"v", "clé")
    producer.produce("orders", b"v", None)
    producer.close(timeout=0)
    (_, v1, h1), (_, v2, h2) = handed
    assert unprotect(reader(), "orders", "clé".encode(), v1, h1) == b"v"
    assert unprotect(reader(), "orders", None, v2, h2) == b"v"


def test_a_key_that_cannot_be_sent_fails_its_record_only() -> None:
    producer = kheaders.Producer(UNREACHABLE, value_serializer=writer())
    handed = _captured(producer)
    with pytest.raises(SerializationError, match="a record key must be bytes, str or None"):
        producer.produce("orders", b"v", 7)
    producer.produce("orders", b"v", b"k")
    producer.close(timeout=0)
    assert [k for k, _, _ in handed] == [b"k"]
