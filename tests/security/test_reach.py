"""kheaders/_client/reach.py without a broker: which error is the cause, secrets scrubbed,
and a refused login ends the wait at once."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from kheaders import BrokerUnavailableError
from kheaders._client.reach import (
    cause_of,
    cluster_metadata,
    collector,
    refused,
    scrubbed,
    wait_for_metadata,
)
from kheaders.cli import main as cli_main

REFUSED = KafkaError(KafkaError._AUTHENTICATION, "h:1/bootstrap: SASL authentication error")
DOWN = KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down")
REFUSED_TCP = KafkaError(KafkaError._TRANSPORT, "h:1/bootstrap: Connection refused")


def test_the_cause_is_the_refusal_then_anything_but_brokers_down() -> None:
    seen: list[KafkaError] = []
    errors: list[KafkaError] = []
    error_cb = collector(errors, seen.append)
    assert cause_of(errors) is None
    for err in (REFUSED, REFUSED_TCP, DOWN):
        error_cb(err)
    assert seen == errors == [REFUSED, REFUSED_TCP, DOWN]  # the config's error_cb gets each
    assert cause_of(errors) == REFUSED
    assert refused(errors)
    assert cause_of([REFUSED_TCP, DOWN]) == REFUSED_TCP
    assert not refused([REFUSED_TCP, DOWN])
    assert cause_of([DOWN]) is None


def test_every_secret_setting_is_scrubbed() -> None:
    config = {"sasl.password": "pw-1", "ssl.key.password": "pw-2", "sasl.username": "bob"}
    assert scrubbed("bob pw-1 pw-2 pw-3", config) == "bob *** *** pw-3"


class _Refused:
    """A client whose metadata requests fail; its error_cb is served by poll()."""

    def __init__(self, errors: list[KafkaError], err: KafkaError) -> None:
        self.errors, self.err, self.asked = errors, err, 0

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        self.asked += 1
        time.sleep(min(timeout, 0.05))
        raise KafkaException(KafkaError(KafkaError._TRANSPORT, "Broker transport failure"))

    def poll(self, timeout: float) -> int:
        self.errors.append(self.err)
        return 1


def test_a_refused_login_ends_the_wait_at_once() -> None:
    errors: list[KafkaError] = []
    client = _Refused(errors, REFUSED)
    with pytest.raises(KafkaException):
        wait_for_metadata(client, errors, timeout=60)
    assert client.asked == 1


def test_anything_else_is_asked_again_until_the_timeout() -> None:
    errors: list[KafkaError] = []
    client = _Refused(errors, REFUSED_TCP)
    with pytest.raises(KafkaException):
        wait_for_metadata(client, errors, timeout=1.0)
    assert client.asked > 1


def test_an_unreachable_cluster_is_named_with_its_cause() -> None:
    config = {"bootstrap.servers": "127.0.0.1:1", "sasl.password": "hunter2"}
    with pytest.raises(BrokerUnavailableError) as caught:
        cluster_metadata(config, "the test cluster", timeout=1.0)
    message = str(caught.value)
    assert message.startswith("the test cluster '127.0.0.1:1' did not answer: ")
    assert "Connection refused" in message  # from error_cb, not "Broker transport failure"
    assert "hunter2" not in message


def test_tail_reports_a_setting_librdkafka_refused_without_its_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli_main([
        "tail", "t", "--bootstrap", "127.0.0.1:1", "-X", "sasl.password=hunter2",
        "-X", "security.protocol=hunter2",
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "security.protocol" in err
    assert "hunter2" not in err
