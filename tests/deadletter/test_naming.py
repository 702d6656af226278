"""One naming rule and one ``dead_letter=`` for every user of a dead-letter topic: the
processors, the mirror, the publisher and the command line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kheaders import ConfigurationError, Producer
from kheaders.aio import AIOProcessor
from kheaders.cli import build_parser
from kheaders.deadletter import DeadLetter, DeadLetterPublisher
from kheaders.mirror import Mirror
from kheaders.processing import Processor

NOWHERE = "127.0.0.1:9"  # nothing listens: nothing is sent


@pytest.fixture
def producer() -> Iterator[Producer]:
    made = Producer({"bootstrap.servers": NOWHERE})
    yield made
    made.close(timeout=0)


def _processor(dead_letter: Any) -> str:
    built = Processor(
        {"bootstrap.servers": NOWHERE, "group.id": "g"}, ["orders"], print, dead_letter=dead_letter
    )
    return built._core.targets("orders")[-1]


def _aio_processor(dead_letter: object) -> str:
    async def handle(_: object) -> None:
        return None

    built = AIOProcessor(
        {"bootstrap.servers": NOWHERE, "group.id": "g"}, ["orders"], handle, dead_letter=dead_letter
    )
    return built._core.targets("orders")[-1]


def _mirror(dead_letter: Any) -> str:
    mirror = Mirror(NOWHERE, "127.0.0.1:8", ["orders"], dead_letter=dead_letter)
    return mirror.dead_letter.topic_for("orders")


USERS: dict[str, Callable[[object], str]] = {
    "Processor": _processor,
    "AIOProcessor": _aio_processor,
    "Mirror": _mirror,
}


@pytest.mark.parametrize("user", sorted(USERS))
@pytest.mark.parametrize(
    ("dead_letter", "topic"),
    [
        (True, "orders-dlt"),
        ("{topic}.dlq", "orders.dlq"),
        ("all-dead", "all-dead"),
        (DeadLetter(suffix="_dlq"), "orders_dlq"),
    ],
)
def test_every_user_reads_dead_letter_the_same_way(
    user: str, dead_letter: object, topic: str
) -> None:
    assert USERS[user](dead_letter) == topic


@pytest.mark.parametrize("user", sorted(USERS))
@pytest.mark.parametrize("bad", [7, "", b"orders-dlt", ["orders-dlt"]])
def test_every_user_refuses_a_bad_dead_letter_at_construction_naming_it(
    user: str, bad: object
) -> None:
    with pytest.raises(ConfigurationError, match=r"^dead_letter: expected DeadLetter\(\.\.\.\)"):
        USERS[user](bad)


def test_the_default_is_springs_everywhere(producer: Producer) -> None:
    assert DeadLetter().topic_for("orders") == "orders-dlt"
    assert DeadLetterPublisher(producer).topic_for("orders") == "orders-dlt"
    assert _mirror(None) == "orders-dlt"
    assert _processor(True) == "orders-dlt"
    args = build_parser().parse_args(["mirror", "--source", "a", "--target", "b", "--topic", "t"])
    assert args.dead_letter == "{topic}-dlt"


def test_the_publisher_and_the_mirror_refuse_springs_contract_when_built(
    producer: Producer,
) -> None:
    assert DeadLetterPublisher(producer, "{topic}.dlq").topic_for("orders") == "orders.dlq"
    with pytest.raises(ConfigurationError, match=r"dead_letter: expected DeadLetter"):
        DeadLetterPublisher(producer, 7)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match=r"dead_letter: .*kheaders\.dlt\.\* headers"):
        DeadLetterPublisher(producer, DeadLetter(contract="spring"))  # the processor's
    with pytest.raises(ConfigurationError, match=r"dead_letter: the mirror writes the kheaders"):
        _mirror(DeadLetter(contract="spring"))  # refused when built, not at the first send
