"""One Apache Kafka with TLS and SASL listeners for the security tests (tests/support/security.py).

TLS and SASL need the real thing: without Java and Maven (the Tansu fallback) these tests skip,
saying so. The broker's PLAINTEXT listener stays first; topics are created through it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kheaders.broker import ApacheKafka, create_topic, java_and_maven_missing
from tests.support.security import Certificates, client_settings, make_certificates, secure_kafka


@pytest.fixture(scope="session")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    """A CA, a broker certificate for 127.0.0.1/localhost it signed, and a CA that signed none."""
    return make_certificates(Path(tmp_path_factory.mktemp("tls")))


@pytest.fixture(scope="session")
def secure_broker(certificates: Certificates) -> Iterator[ApacheKafka]:
    """Apache Kafka with ``SSL`` and ``SASL_SSL`` (PLAIN, SCRAM-SHA-512) listeners."""
    missing = java_and_maven_missing()
    if missing is not None:
        pytest.skip(f"TLS and SASL need Apache Kafka: {missing}")
    kafka = secure_kafka(certificates).start()
    try:
        yield kafka
    finally:
        kafka.stop()


@pytest.fixture(scope="session")
def secured(
    secure_broker: ApacheKafka, certificates: Certificates
) -> Callable[[str], dict[str, object]]:
    """``secured(how)``: client settings for ``"ssl"``, ``"plain"`` or ``"scram"``."""

    def settings(how: str) -> dict[str, object]:
        return client_settings(secure_broker, certificates, how)

    return settings


@pytest.fixture
def secure_topic(secure_broker: ApacheKafka, request: pytest.FixtureRequest) -> str:
    """A fresh single-partition topic on the secure broker (created over PLAINTEXT)."""
    base = request.node.name.replace("[", "-").replace("]", "")[:50]
    return create_topic(secure_broker.bootstrap, f"{base}-{uuid.uuid4().hex[:8]}")
