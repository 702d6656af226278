"""Helpers of the cross-feature tests: protected producers and readers."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, TopicPartition

import kheaders
from kheaders.protect import (
    ProtectedDeserializer,
    ProtectedSerializer,
    RecordKeyDeserializer,
    RecordKeySerializer,
)
from tests.integration.conftest import Keys


def protected_producer(bootstrap: str, keys: Keys, *, signed: bool, **config: Any) -> Any:
    """A kheaders Producer encrypting values (signing them too when ``signed``), binding the
    ``tenant`` header."""
    return kheaders.Producer(
        {
            "bootstrap.servers": bootstrap,
            "key.serializer": RecordKeySerializer(),
            "value.serializer": ProtectedSerializer(
                keyring=keys.aes,
                signing_keyring=keys.signing if signed else None,
                bound_headers=["tenant"],
            ),
            **config,
        }
    )


def opener(keys: Keys, *, signed: bool, contexts: Iterable[str] | None = None) -> dict[str, Any]:
    """Key and value deserializers that open what :func:`protected_producer` wrote
    (signatures required when ``signed``; ``contexts`` accepted, default the topic read)."""
    return {
        "key.deserializer": RecordKeyDeserializer(),
        "value.deserializer": ProtectedDeserializer(
            keyring=keys.aes,
            verify_keyring=keys.verifying if signed else None,
            contexts=set(contexts) if contexts is not None else None,
        ),
    }


def open_one(bootstrap: str, topic: str, offset: int, settings: dict[str, Any]) -> Any:
    """The record at ``topic[0]@offset`` read by a kheaders Consumer with ``settings``
    (its deserializers): the Message, or the exception its read raised."""
    consumer = kheaders.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"open-{uuid.uuid4().hex[:8]}", **settings}
    )
    consumer.assign([TopicPartition(topic, 0, offset if offset >= 0 else OFFSET_BEGINNING)])
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            try:
                msg = consumer.poll(0.2)
            except kheaders.DeserializationError as exc:
                return exc
            if msg is not None and msg.error() is None:
                return msg
    finally:
        consumer.close()
    raise AssertionError(f"nothing at {topic}[0]@{offset}")
