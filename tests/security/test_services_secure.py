"""The processor, the mirror and ``kheaders tail`` reach a TLS + SASL cluster with the same
librdkafka keys as the clients."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kheaders import Producer
from kheaders.broker import ApacheKafka, create_topic
from kheaders.cli import main as cli_main
from kheaders.deadletter import DeadLetter
from kheaders.mirror import Mirror
from kheaders.processing import Processor
from tests.security.helpers import read_all

pytestmark = pytest.mark.integration

FAST_GROUP = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500}


def _produce(config: dict[str, object], topic: str, values: list[bytes]) -> None:
    producer = Producer(config)
    for value in values:
        producer.produce(topic, value, headers=[("origin", b"secure"), ("n", value)])
    assert producer.flush(30) == 0


def test_processor_consumes_and_dead_letters_over_sasl_plain(
    secured: Callable[[str], dict[str, object]], secure_topic: str
) -> None:
    config = secured("plain")
    _produce(config, secure_topic, [b"ok-1", b"bad", b"ok-2"])
    handled: list[bytes] = []
    done = threading.Event()

    def handle(msg: Any) -> None:
        if msg.value() == b"bad":
            raise ValueError("refused")
        handled.append(msg.value())
        if len(handled) == 2:
            done.set()

    processor = Processor(
        {**config, "group.id": f"proc-{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest",
         **FAST_GROUP},
        [secure_topic],
        handle,
        dead_letter=DeadLetter(),
        handle_signals=False,
    )  # fmt: skip
    thread = threading.Thread(target=processor.run, daemon=True)
    thread.start()
    try:
        assert done.wait(60), "the processor handled nothing"
        (dead,) = read_all(config, secure_topic + "-dlt", 1)  # republished over SASL_SSL too
    finally:
        processor.stop()
        thread.join(60)
    assert handled == [b"ok-1", b"ok-2"]
    assert dead.value() == b"bad"
    assert dead.headers().last_value("origin") == b"secure"


def test_mirror_copies_from_a_sasl_scram_cluster_to_a_plain_one(
    secured: Callable[[str], dict[str, object]],
    secure_broker: ApacheKafka,
    bootstrap: str,
    secure_topic: str,
) -> None:
    source = secured("scram")
    create_topic(secure_broker.bootstrap, secure_topic + "-dlt")
    create_topic(bootstrap, secure_topic)
    _produce(source, secure_topic, [b"m-1", b"m-2"])
    mirror = Mirror(
        {**source, "group.id": f"mirror-{uuid.uuid4().hex[:6]}", **FAST_GROUP},
        bootstrap,
        [secure_topic],
    )
    thread = threading.Thread(target=mirror.run, kwargs={"idle_timeout": 120}, daemon=True)
    thread.start()
    try:
        copies = read_all({"bootstrap.servers": bootstrap}, secure_topic, 2)
    finally:
        mirror.stop()
        thread.join(60)
    assert [m.value() for m in copies] == [b"m-1", b"m-2"]
    assert [m.headers().last_value("origin") for m in copies] == [b"secure", b"secure"]


def test_tail_reads_over_sasl_with_a_config_file_and_x_settings(
    secured: Callable[[str], dict[str, object]],
    secure_topic: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = secured("scram")
    _produce(config, secure_topic, [b"tailed"])
    settings = tmp_path / "client.properties"
    settings.write_text(
        "# kept off the command line\n"
        f"sasl.username={config['sasl.username']}\n"
        f"sasl.password={config['sasl.password']}\n"
    )
    code = cli_main([
        "tail", secure_topic, "--bootstrap", str(config["bootstrap.servers"]),
        "--from-beginning", "--max", "1", "--timeout", "60", "--config", str(settings),
        "-X", "security.protocol=SASL_SSL", "-X", f"ssl.ca.location={config['ssl.ca.location']}",
        "-X", "sasl.mechanism=SCRAM-SHA-512",
    ])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "value: tailed" in out
    assert "origin: secure" in out
