"""Loopback ports and waiting for a broker to answer: shared by every broker kheaders starts."""

from __future__ import annotations

import socket
import time

from confluent_kafka.admin import AdminClient

from kheaders._errors import BrokerUnavailableError


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_broker(bootstrap: str, timeout: float = 30.0) -> None:
    """Block until the broker answers a metadata request.

    Raises BrokerUnavailableError when it does not within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            admin.list_topics(timeout=1.0)
            return
        except Exception as exc:  # librdkafka raises KafkaException until it answers
            last = exc
            time.sleep(0.05)
    raise BrokerUnavailableError(f"broker {bootstrap} did not answer within {timeout}s: {last}")
