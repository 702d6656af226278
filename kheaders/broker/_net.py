"""Loopback ports, and waiting for a broker process to listen and answer: shared by every
broker kheaders starts (the embedded Tansu, Apache Kafka)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
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


def wait_listening(
    process: subprocess.Popen[bytes] | None, port: int, deadline: float, what: str
) -> None:
    """Block until something accepts connections on 127.0.0.1:``port``.

    Raises BrokerUnavailableError naming ``what`` when ``process`` exits first or
    ``deadline`` (a ``time.monotonic()`` value) passes.
    """
    while time.monotonic() < deadline:
        if process is None or process.poll() is not None:
            raise BrokerUnavailableError(f"{what} exited")
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=0.2),
        ):
            return
        time.sleep(0.02)
    raise BrokerUnavailableError(f"{what} is not listening")


def halt(process: subprocess.Popen[bytes] | None, *, graceful: bool, timeout: float) -> None:
    """End ``process`` and reap it: SIGTERM first when ``graceful`` (SIGKILL after ``timeout``
    seconds), else SIGKILL at once, as a crash would. None or an ended process: nothing."""
    if process is None or process.poll() is not None:
        return
    if graceful:
        process.terminate()
        try:
            process.wait(timeout)
            return
        except subprocess.TimeoutExpired:
            pass
    process.kill()
    process.wait(timeout)
