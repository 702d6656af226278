"""confluent-kafka's Producer contract, continued: what a delivery callback keeps alive,
``produce_batch``'s argument checks, and a subclass that never initialised its producer.

Read from confluent-kafka-python's own tests (integration_test.py's
``test_producer_dr_only_error``, test_Producer.py's ``test_produce_batch_*`` and
``test_uninitialized_producer_methods``) and its C source; written here, copied from none.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

import kheaders
from tests.compat.conftest import build_producer, producer_class
from tests.compat.differences import contract

pytestmark = pytest.mark.integration

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:1", "log_level": 0}


class _State:
    """What an application's callback may hold (a request, a buffer): must not outlive it."""

    def __init__(self) -> None:
        self.reports: list[KafkaError | None] = []

    def done(self, err: KafkaError | None, msg: Any) -> None:
        self.reports.append(err)


@pytest.mark.parametrize("headers", [None, [("h", b"1")]], ids=["no-headers", "headers"])
def test_delivery_callbacks_are_released_after_their_reports(
    producer_flavour: str, producer_config: dict[str, Any], topic: str, headers: Any
) -> None:
    with contract("delivery_callback_released", producer_flavour):
        producer = build_producer(producer_flavour, producer_config)
        states = [_State() for _ in range(3)]
        for state in states:
            producer.produce(topic, b"v", on_delivery=state.done, headers=headers)
            producer.produce(topic, b"w", on_delivery=state.done, headers=headers)
        assert producer.flush(15) == 0
        assert [s.reports for s in states] == [[None, None]] * 3
        refs = [weakref.ref(s) for s in states]
        del states, state
        gc.collect()
        assert [r() for r in refs] == [None, None, None]


def test_a_callback_never_called_is_released_too(
    producer_flavour: str, producer_config: dict[str, Any], topic: str
) -> None:
    """delivery.report.only.error: a delivered record's report never runs (confluent's
    ``test_producer_dr_only_error``)."""
    with contract("delivery_callback_released_dr_only_error", producer_flavour):
        producer = build_producer(
            producer_flavour, {**producer_config, "delivery.report.only.error": True}
        )
        state = _State()
        producer.produce(topic, b"GOOD", on_delivery=state.done)
        ref = weakref.ref(state)
        del state
        gc.collect()
        assert ref() is not None  # librdkafka still holds the record's report
        assert producer.flush(15) == 0
        gc.collect()
        assert ref() is None


# -- produce_batch's checks ------------------------------------------------------------------

NOT_STR = "must be bytes or str"
NO_TIMESTAMPS = "Message timestamps are not currently supported in batch mode"
BAD_BATCHES: list[tuple[Any, type[Exception], str]] = [
    ("not_a_list", TypeError, "messages must be a list"),
    ({"not": "list"}, TypeError, "messages must be a list"),
    ((), TypeError, "messages must be a list"),
    ([{"value": b"ok"}, "not_dict", {}], TypeError, "Message at index 1 must be a dict"),
    ([{"value": 123}], TypeError, f"Message value at index 0 {NOT_STR}"),
    (
        [{"value": b"a"}, {"value": bytearray(b"x")}],
        TypeError,
        f"Message value at index 1 {NOT_STR}",
    ),
    ([{"value": b"good", "key": ["invalid"]}], TypeError, f"Message key at index 0 {NOT_STR}"),
    ([{"partition": "invalid"}], TypeError, "Message partition at index 0 must be int"),
    ([{"value": b"m", "timestamp": 1234}], NotImplementedError, NO_TIMESTAMPS),
    ([{"value": b"a"}, {"value": b"m", "timestamp": 0}], NotImplementedError, NO_TIMESTAMPS),
]


@pytest.mark.parametrize(("batch", "error", "message"), BAD_BATCHES)
def test_produce_batch_refuses_a_bad_batch_whole(
    producer_flavour: str, batch: Any, error: type[Exception], message: str
) -> None:
    with contract("produce_batch_argument_checks", producer_flavour):
        producer = build_producer(producer_flavour, dict(UNREACHABLE))
        reported: list[Any] = []
        with pytest.raises(error) as raised:
            producer.produce_batch("t", batch, on_delivery=lambda e, m: reported.append(m))
        assert type(raised.value) is error
        assert str(raised.value).startswith(message)
        producer.purge()
        producer.flush(5)
        assert reported == []  # nothing of the batch was queued


GOOD_BATCHES: list[tuple[list[dict[str, Any]], int]] = [
    ([{"value": b"bytes", "key": b"k"}, {"value": "str", "key": "k"}, {"value": None}, {}], 4),
    ([{"value": b"x", "timestamp": None, "key": None, "partition": None}], 1),
    ([{"value": b"x", "partition": -2}], 1),
    ([{"value": b"x", "partition": True}], 1),
    ([{"value": b"m", "callback": "not callable", "extra": 1, "_private": 2}], 1),
    ([], 0),
]


@pytest.mark.parametrize(("batch", "count"), GOOD_BATCHES)
def test_produce_batch_takes_what_confluent_takes(
    producer_flavour: str, batch: list[dict[str, Any]], count: int
) -> None:
    with contract("produce_batch_accepted", producer_flavour):
        producer = build_producer(producer_flavour, dict(UNREACHABLE))
        assert producer.produce_batch("t", batch) == count
        assert not [m for m in batch if "_error" in m]
        producer.purge()


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((123, [{}]), {}), ((None, [{}]), {}), (("t", [{}]), {"partition": "x"})],
    ids=["nothing", "int-topic", "none-topic", "str-partition"],
)
def test_produce_batch_argument_types(producer_flavour: str, args: Any, kwargs: Any) -> None:
    with contract("produce_batch_argument_types", producer_flavour):
        producer = build_producer(producer_flavour, dict(UNREACHABLE))
        with pytest.raises(TypeError):
            producer.produce_batch(*args, **kwargs)


# -- a subclass that never called super().__init__() ----------------------------------------


def _uninitialised(producer_flavour: str) -> Any:
    if producer_flavour == "wrapped":

        class Raw(confluent_kafka.Producer):
            def __init__(self, config: dict[str, Any]) -> None:
                pass  # leaves librdkafka's handle unset

        return kheaders.wrap_producer(Raw({}))
    base = producer_class(producer_flavour)

    class Uninitialised(base):  # type: ignore[misc, valid-type]
        def __init__(self, config: dict[str, Any]) -> None:
            pass

    return Uninitialised({})


UNINITIALISED_CALLS: dict[str, Callable[[Any], object]] = {
    "produce": lambda p: p.produce("topic", value=b"test"),
    "poll": lambda p: p.poll(),
    "flush": lambda p: p.flush(),
    "purge": lambda p: p.purge(),
    "produce_batch": lambda p: p.produce_batch("topic", [{"value": b"test"}]),
    "init_transactions": lambda p: p.init_transactions(),
    "begin_transaction": lambda p: p.begin_transaction(),
    "commit_transaction": lambda p: p.commit_transaction(),
    "abort_transaction": lambda p: p.abort_transaction(),
}


@pytest.mark.parametrize("method", sorted(UNINITIALISED_CALLS))
def test_an_uninitialised_producer_raises_runtime_error(producer_flavour: str, method: str) -> None:
    with contract("producer_uninitialised", producer_flavour):
        producer = _uninitialised(producer_flavour)
        with pytest.raises(RuntimeError, match="Producer has been closed"):
            UNINITIALISED_CALLS[method](producer)


def test_an_uninitialised_producer_refuses_offsets_and_has_no_length(producer_flavour: str) -> None:
    with contract("producer_uninitialised", producer_flavour):
        producer = _uninitialised(producer_flavour)
        consumer = Consumer({"group.id": "t", "socket.timeout.ms": 10})
        metadata = consumer.consumer_group_metadata()
        consumer.close()
        with pytest.raises(RuntimeError, match="Producer has been closed"):
            producer.send_offsets_to_transaction([TopicPartition("topic", 0)], metadata)
        assert len(producer) == 0
        assert repr(producer)
