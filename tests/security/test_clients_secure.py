"""Every client connects over TLS, SASL/PLAIN and SASL/SCRAM-SHA-512 with librdkafka's
documented keys (``security.protocol``, ``ssl.ca.location``, ``sasl.mechanism``,
``sasl.username``, ``sasl.password``) and carries headers byte for byte."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from kheaders import Producer
from kheaders.aio import AIOConsumer, AIOProducer
from tests.security.helpers import read_all

pytestmark = pytest.mark.integration

HEADERS = [("tenant", b"acme"), ("dup", b"1"), ("dup", None), ("bin", b"\x00\xff")]


@pytest.mark.parametrize("how", ["ssl", "plain", "scram"])
def test_producer_and_consumer_over(
    how: str, secured: Callable[[str], dict[str, object]], secure_topic: str
) -> None:
    config = secured(how)
    producer = Producer(config)
    producer.produce(secure_topic, b"v", b"k", headers=HEADERS)
    assert producer.flush(30) == 0
    (msg,) = read_all(config, secure_topic, 1)
    assert (msg.key(), msg.value()) == (b"k", b"v")
    assert [tuple(h) for h in msg.headers()] == HEADERS


def test_ssl_ca_pem_inline_works_as_ssl_ca_location(
    secured: Callable[[str], dict[str, object]], secure_topic: str
) -> None:
    config = secured("scram")
    location = str(config.pop("ssl.ca.location"))
    with open(location, encoding="ascii") as pem:
        config["ssl.ca.pem"] = pem.read()
    producer = Producer(config)
    producer.produce(secure_topic, b"inline", headers={"h": b"1"})
    assert producer.flush(30) == 0
    (msg,) = read_all(config, secure_topic, 1)
    assert msg.value() == b"inline"


def test_aio_producer_and_consumer_over_sasl_scram(
    secured: Callable[[str], dict[str, object]], secure_topic: str
) -> None:
    config = secured("scram")

    async def main() -> list[tuple[bytes | None, list[tuple[str, bytes | None]]]]:
        async with AIOProducer(config) as producer:
            futures = [
                await producer.produce(secure_topic, f"v{i}".encode(), headers=HEADERS)
                for i in range(3)
            ]
            for future in futures:
                assert (await future).error() is None
        consumer = AIOConsumer({**config, "group.id": "aio-secure", "enable.auto.commit": False})
        try:
            await consumer.assign([TopicPartition(secure_topic, 0, OFFSET_BEGINNING)])
            got: list[tuple[bytes | None, list[tuple[str, bytes | None]]]] = []
            async with asyncio.timeout(60):
                while len(got) < 3:
                    msg = await consumer.poll(0.5)
                    if msg is not None and msg.error() is None:
                        got.append((msg.value(), [tuple(h) for h in msg.headers()]))
            return got
        finally:
            await consumer.close()

    got = asyncio.run(main())
    assert got == [(f"v{i}".encode(), HEADERS) for i in range(3)]
