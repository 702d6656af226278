"""``kheaders tail`` on protected records: the protection instead of ciphertext, and signatures
checked with ``--verify-keys``."""

from __future__ import annotations

import base64
from pathlib import Path

import confluent_kafka
import pytest
from confluent_kafka import Message

from kheaders.cli import main
from tests.protect.helpers import SIGNING_PUBLIC, assert_no_secret
from tests.protect.test_protect_broker import (
    MARKER,
    assigned,
    consumer_config,
    produce,
    protecting_producer,
    read,
)

pytestmark = pytest.mark.integration


def test_tail_shows_the_protection_and_verifies_signatures(
    bootstrap: str, topic: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    producer = protecting_producer(bootstrap)
    produce(producer, topic, 2)
    producer.close()
    source = assigned(confluent_kafka.Consumer(consumer_config(bootstrap)), topic)
    try:
        original = read(source, 1)[0]
    finally:
        source.close()
    assert isinstance(original, Message)
    raw = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    forged = [(k, b"evil" if k == "tenant" else v) for k, v in original.headers() or []]
    raw.produce(topic, original.value(), original.key(), headers=forged)
    assert raw.flush(30) == 0
    (tmp_path / "s1.key").write_text(base64.b64encode(SIGNING_PUBLIC).decode())

    args = ["tail", topic, "--bootstrap", bootstrap, "--from-beginning", "--max", "3"]
    assert main([*args, "--timeout", "20", "--verify-keys", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("value: <encrypted kid=k1 alg=A256GCM>") == 3
    assert out.count(f"signature: valid (kid=s1, context={topic})") == 2
    assert out.count("signature: REFUSED: protected record refused: bad signature (kid='s1')") == 1
    assert MARKER not in out
    assert_no_secret(out)

    assert main([*args, "--timeout", "20"]) == 0
    plain = capsys.readouterr().out
    assert plain.count("<encrypted kid=k1 alg=A256GCM>") == 3
    assert "  signature:" not in plain

    assert main([*args, "--verify-keys", str(tmp_path / "none")]) == 2
    assert "does not exist" in capsys.readouterr().err
