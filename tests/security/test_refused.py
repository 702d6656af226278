"""A wrong password or a broker certificate the client does not trust: each surface says so,
naming the bootstrap servers and the cause, and never shows the password it was given."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError

from kheaders import BrokerUnavailableError, Consumer, Producer
from kheaders.aio import AIOProcessor
from kheaders.cli import main as cli_main
from kheaders.mirror import Mirror
from kheaders.processing import Processor
from tests.support.security import Certificates

pytestmark = pytest.mark.integration

WRONG = "wrong-Pw-" + uuid.uuid4().hex[:8]
REFUSED_LOGIN = "SASL authentication error"
UNVERIFIED = "certificate verify failed"


def _wrong_password(settings: dict[str, object]) -> dict[str, object]:
    return {**settings, "sasl.password": WRONG}


def _untrusted(settings: dict[str, object], certs: Certificates) -> dict[str, object]:
    return {**settings, "ssl.ca.location": str(certs.untrusted_ca)}


def _assert_clear(text: str, bootstrap: object, cause: str) -> None:
    assert str(bootstrap) in text, text
    assert cause in text, text
    assert WRONG not in text, text


@pytest.mark.parametrize("how", ["plain", "scram"])
def test_clients_report_a_refused_password_to_error_cb(
    how: str, secured: Callable[[str], dict[str, object]]
) -> None:
    """Producer and Consumer are confluent's drop-ins: librdkafka's error, unchanged, names
    the broker it tried (``sasl_ssl://127.0.0.1:PORT/bootstrap``) and why."""
    settings = _wrong_password(secured(how))
    errors: list[KafkaError] = []
    producer = Producer({**settings, "error_cb": errors.append})
    consumer = Consumer({**settings, "group.id": "refused", "error_cb": errors.append})
    consumer.subscribe(["anything"])
    deadline = time.monotonic() + 30
    try:
        while len({e.code() for e in errors}) < 1 and time.monotonic() < deadline:
            producer.poll(0.1)
            consumer.poll(0.1)
    finally:
        consumer.close()
    refused = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
    assert refused, errors
    _assert_clear(refused[-1].str(), settings["bootstrap.servers"], REFUSED_LOGIN)


def test_mirror_check_names_the_target_and_its_refused_password(
    secured: Callable[[str], dict[str, object]], bootstrap: str
) -> None:
    target = _wrong_password(secured("scram"))
    mirror = Mirror(bootstrap, target, ["orders"])
    started = time.monotonic()
    with pytest.raises(BrokerUnavailableError) as caught:
        mirror.check()
    _assert_clear(str(caught.value), target["bootstrap.servers"], REFUSED_LOGIN)
    assert "target cluster" in str(caught.value)
    assert time.monotonic() - started < 15  # refused: not waited out (Java's rule)


def test_mirror_check_names_the_source_and_its_unverified_certificate(
    secured: Callable[[str], dict[str, object]], certificates: Certificates, bootstrap: str
) -> None:
    source = _untrusted(secured("ssl"), certificates)
    with pytest.raises(BrokerUnavailableError) as caught:
        Mirror(source, bootstrap, ["orders"]).check()
    _assert_clear(str(caught.value), source["bootstrap.servers"], UNVERIFIED)
    assert "source cluster" in str(caught.value)


def test_processor_run_names_the_cluster_and_its_unverified_certificate(
    secured: Callable[[str], dict[str, object]], certificates: Certificates
) -> None:
    settings = _untrusted(_wrong_password(secured("plain")), certificates)
    processor = Processor(
        {**settings, "group.id": "refused"}, ["orders"], lambda msg: None, handle_signals=False
    )
    with pytest.raises(BrokerUnavailableError) as caught:
        processor.run()
    _assert_clear(str(caught.value), settings["bootstrap.servers"], UNVERIFIED)


def test_processor_run_names_the_cluster_and_its_refused_password(
    secured: Callable[[str], dict[str, object]],
) -> None:
    settings = _wrong_password(secured("scram"))
    processor = Processor(
        {**settings, "group.id": "refused"}, ["orders"], lambda msg: None, handle_signals=False
    )
    with pytest.raises(BrokerUnavailableError) as caught:
        processor.run()
    _assert_clear(str(caught.value), settings["bootstrap.servers"], REFUSED_LOGIN)


def test_aio_processor_run_names_the_cluster_and_its_refused_password(
    secured: Callable[[str], dict[str, object]],
) -> None:
    settings = _wrong_password(secured("plain"))

    async def handle(msg: Any) -> None:
        pass

    processor = AIOProcessor(
        {**settings, "group.id": "refused"}, ["orders"], handle, handle_signals=False
    )
    with pytest.raises(BrokerUnavailableError) as caught:
        asyncio.run(processor.run())
    _assert_clear(str(caught.value), settings["bootstrap.servers"], REFUSED_LOGIN)


@pytest.mark.parametrize("fault", ["password", "certificate"])
def test_tail_says_why_in_one_line_and_exits_2(
    fault: str,
    secured: Callable[[str], dict[str, object]],
    certificates: Certificates,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = secured("scram")
    ca = certificates.untrusted_ca if fault == "certificate" else settings["ssl.ca.location"]
    password = WRONG if fault == "password" else settings["sasl.password"]
    code = cli_main([
        "tail", "orders", "--bootstrap", str(settings["bootstrap.servers"]), "--timeout", "5",
        "-X", "security.protocol=SASL_SSL", "-X", f"ssl.ca.location={ca}",
        "-X", "sasl.mechanism=SCRAM-SHA-512", "-X", f"sasl.username={settings['sasl.username']}",
        "-X", f"sasl.password={password}",
    ])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    cause = REFUSED_LOGIN if fault == "password" else UNVERIFIED
    _assert_clear(lines[0], settings["bootstrap.servers"], cause)
    assert str(settings["sasl.password"]) not in lines[0]
