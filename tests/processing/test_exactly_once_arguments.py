"""ExactlyOnceProcessor's own arguments checked at construction (the Processor's are in
test_arguments.py): each refusal names the argument and the setting; emit() outside its
handler is refused with a ProcessingError that says where it works."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from kheaders import ConfigurationError
from kheaders._errors import ProcessingError
from kheaders.processing import ExactlyOnceProcessor, Processor, RetryTopics, emit
from kheaders.processing._delivery import RUNNING
from tests.processing.test_arguments import BAD as PROCESSOR_BAD

CONFIG = {"bootstrap.servers": "localhost:1", "group.id": "arguments"}
"""Nothing here connects: construction alone is under test."""


def handle(_msg: Any) -> None:
    return None


def build(**changes: Any) -> ExactlyOnceProcessor:
    kwargs: dict[str, Any] = {
        "config": dict(CONFIG),
        "topics": ["orders"],
        "handler": handle,
        "transactional_id": "orders-eos-0",
    }
    kwargs.update(changes)
    return ExactlyOnceProcessor(**kwargs)


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("transactional_id (None)", {"transactional_id": None}, r"^transactional_id: expected a"),
    ("transactional_id (bytes)", {"transactional_id": b"tx"}, r"^transactional_id: .*got bytes"),
    ("transactional_id (blank)", {"transactional_id": "  "}, r"^transactional_id: .*non-empty"),
    (
        "transactional.id in config",
        {"config": {**CONFIG, "transactional.id": "tx"}},
        r"^config: transactional\.id: give transactional_id= instead",
    ),
    (
        "transactional.id in producer_config",
        {"producer_config": {"transactional.id": "tx"}},
        r"^producer_config: transactional\.id: give transactional_id= instead",
    ),
    (
        "enable.auto.commit",
        {"config": {**CONFIG, "enable.auto.commit": True}},
        r"^enable\.auto\.commit: the processor commits",
    ),
    (
        "isolation.level",
        {"config": {**CONFIG, "isolation.level": "read_uncommitted"}},
        r"^config: isolation\.level: .*read_committed",
    ),
    (
        "enable.idempotence",
        {"producer_config": {"enable.idempotence": False}},
        r"^producer_config: enable\.idempotence: transactions need",
    ),
    ("acks", {"producer_config": {"acks": 1}}, r"^producer_config: acks: transactions need"),
    (
        "in-place attempts longer than the transaction",
        {
            "retry": RetryTopics(delays=[], in_place=3, in_place_delay=5),
            "producer_config": {"transaction.timeout.ms": 20_000},
        },
        r"RetryTopics: in_place=3 x in_place_delay=5.* transaction\.timeout\.ms \(20 s\)",
    ),
    (
        "a misspelt producer setting",
        {"producer_config": {"transaction.timeout.mz": 1000}},
        r'^producer_config: No such configuration property: "transaction\.timeout\.mz"',
    ),
]


@pytest.mark.parametrize(("name", "changes", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_argument_is_refused_naming_it(
    name: str, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        build(**changes)


def test_commit_interval_is_not_an_argument_each_batch_is_a_transaction() -> None:
    with pytest.raises(
        ConfigurationError, match="commit_interval: ExactlyOnceProcessor takes no such option"
    ):
        build(commit_interval=1.0)


def test_a_good_construction_reads_committed_with_an_idempotent_transactional_producer() -> None:
    processor = build(producer_config={"linger.ms": 20})
    assert processor.transactional_id == "orders-eos-0"
    assert processor._consumer_config["isolation.level"] == "read_committed"
    assert processor._producer_config["transactional.id"] == "orders-eos-0"
    assert processor._producer_config["enable.idempotence"] is True
    assert processor._producer_config["acks"] == "all"
    assert processor._producer_config["linger.ms"] == 20


def test_the_settings_are_not_echoed_in_a_refusal() -> None:
    secret = "hunter2-secret"
    with pytest.raises(ConfigurationError) as raised:
        build(config={**CONFIG, "transactional.id": secret})
    assert secret not in str(raised.value)


def test_emit_outside_an_exactly_once_handler_says_where_it_works() -> None:
    with pytest.raises(ProcessingError, match=re.escape("emit() sends from the handler of")):
        emit("out", b"x")
    token = RUNNING.set(Processor(dict(CONFIG), ["orders"], handle))  # at-least-once
    try:
        with pytest.raises(ProcessingError, match="no transaction to put it in"):
            emit("out", b"x")
    finally:
        RUNNING.reset(token)
    token = RUNNING.set(build())  # running, but no record in hand
    try:
        with pytest.raises(ProcessingError, match="from inside a handler call"):
            emit("out", b"x")
    finally:
        RUNNING.reset(token)


SHARED = [case for case in PROCESSOR_BAD if not case[0].startswith("commit_interval")]


@pytest.mark.parametrize(("argument", "changes", "expected"), SHARED, ids=[b[0] for b in SHARED])
def test_the_processors_arguments_are_refused_the_same(
    argument: str, changes: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigurationError, match=expected):
        build(**changes)


def test_every_argument_has_a_refusal_here_or_in_the_processors_cases() -> None:
    """A new argument cannot be added without a case in BAD or SHARED."""
    names = set(inspect.signature(ExactlyOnceProcessor.__init__).parameters)
    names = (names | set(ExactlyOnceProcessor.OPTIONS)) - {"self", "options"}
    tested = {case[0].split(" ")[0] for case in (*BAD, *SHARED)}
    assert names - tested == set()
