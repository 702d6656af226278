"""A protected record (kheaders.protect) through a Processor's retry and dead-letter topics,
and back through ``kheaders dlt replay``: bytes untouched, still opening at the end."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from contextlib import redirect_stdout
from typing import Any

import pytest

from kheaders import IntegrityError
from kheaders.cli import main
from kheaders.deadletter import DeadLetter
from kheaders.deadletter import spring as sh
from kheaders.processing import Processor, RetryTopics
from kheaders.protect import PROTECT_HEADER, SIGN_HEADER, SIGNATURE_HEADER
from tests.integration.conftest import Keys
from tests.integration.helpers import open_one, opener, protected_producer
from tests.processing.helpers import Running, config, read_all, wait_for

pytestmark = pytest.mark.integration

PLAIN = b"refund 12 to DE89370400440532013000"


class Declined(Exception):
    """The handler's failure: every attempt fails."""


def _produce_protected(bootstrap: str, topic: str, keys: Keys, *, signed: bool) -> None:
    producer = protected_producer(bootstrap, keys, signed=signed)
    producer.produce(topic, PLAIN, b"order-19", headers=[("tenant", b"acme"), ("route", b"\x00eu")])
    assert producer.flush(10) == 0
    producer.close(timeout=5)


@pytest.mark.parametrize("signed", [False, True], ids=["encrypted", "encrypted+signed"])
def test_a_protected_record_crosses_retry_and_dead_letter_topics_untouched_and_opens(
    bootstrap: str, topic_factory: Callable[..., str], keys: Keys, signed: bool
) -> None:
    topic = topic_factory()
    _produce_protected(bootstrap, topic, keys, signed=signed)
    [sent] = read_all(bootstrap, topic, 1)
    expected = {PROTECT_HEADER, SIGN_HEADER, SIGNATURE_HEADER} if signed else {PROTECT_HEADER}
    assert {k for k, _ in sent.headers} >= expected
    seen: list[tuple[str, object, object]] = []
    lock = threading.Lock()

    def handle(msg: Any) -> None:
        with lock:
            seen.append((msg.topic(), msg.key(), msg.value()))
        raise Declined("payment service says no")

    # the processor opens records on the retry topic too: it accepts the original context
    settings = opener(keys, signed=signed, contexts=[topic])
    proc = Processor(config(bootstrap, **settings), [topic], handle, retry=RetryTopics([0.2]))
    running = Running(proc)
    try:
        wait_for(lambda: len(seen) == 2, what="the record handled on the topic and its retry")
        [retried] = read_all(bootstrap, f"{topic}-retry", 1)
        [dead] = read_all(bootstrap, f"{topic}-dlt", 1)
    finally:
        running.stop()
    # the handler got the opened record both times (a refusal would have gone straight to
    # the dead-letter topic as a DeserializationError, never reaching it)
    assert seen == [(topic, b"order-19", PLAIN), (f"{topic}-retry", b"order-19", PLAIN)]
    for hop in (retried, dead):
        assert (hop.key, hop.value) == (sent.key, sent.value)  # the ciphertext, byte for byte
        assert hop.headers[: len(sent.headers)] == sent.headers  # every header, in order
        added = {k for k, _ in hop.headers[len(sent.headers) :]}
        assert not added & {k for k, _ in sent.headers}  # none of them written again
    assert dead.last(sh.EXCEPTION_FQCN) == f"{__name__}.Declined".encode()
    assert dead.last(sh.ORIGINAL_TOPIC) == topic.encode()

    # opens at the end with a reader that accepts the original topic as context...
    opened = open_one(bootstrap, f"{topic}-dlt", 0, opener(keys, signed=signed, contexts=[topic]))
    assert not isinstance(opened, Exception), opened
    assert (opened.key(), opened.value()) == (b"order-19", PLAIN)
    # ...and only with one: the dead-letter topic is not the context it was protected for
    refused = open_one(bootstrap, f"{topic}-dlt", 0, opener(keys, signed=signed))
    assert isinstance(refused, IntegrityError), refused
    assert "does not accept" in str(refused)


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def test_a_replayed_protected_dead_letter_opens_on_its_original_topic(
    bootstrap: str, topic_factory: Callable[..., str], keys: Keys
) -> None:
    topic = topic_factory()
    _produce_protected(bootstrap, topic, keys, signed=True)
    [sent] = read_all(bootstrap, topic, 1)
    failed: list[int] = []

    def handle(msg: Any) -> None:
        failed.append(msg.offset())
        raise Declined("not today")

    settings = opener(keys, signed=True)  # the topic read is the context: no retry topics
    proc = Processor(config(bootstrap, **settings), [topic], handle, dead_letter=DeadLetter())
    running = Running(proc)
    try:
        [dead] = read_all(bootstrap, f"{topic}-dlt", 1)
    finally:
        running.stop()
    assert failed == [0]
    assert dead.headers[: len(sent.headers)] == sent.headers

    code, text = _cli("dlt", "replay", f"{topic}-dlt", "--bootstrap", bootstrap, "--timeout", "1")
    assert code == 0, text
    assert "replayed 1 of 1" in text, text
    back = read_all(bootstrap, topic, 2)
    assert [r.offset for r in back] == [0, 1]
    assert (back[1].key, back[1].value) == (sent.key, sent.value)
    assert back[1].headers == sent.headers  # the retry state taken off, nothing else
    opened = open_one(bootstrap, topic, 1, opener(keys, signed=True))  # default context
    assert not isinstance(opened, Exception), opened
    assert (opened.key(), opened.value()) == (b"order-19", PLAIN)
