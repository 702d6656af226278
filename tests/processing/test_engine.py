"""The processing engine's decisions, event by event, on a fake clock (no broker, no I/O)."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, Message, TopicPartition

from kheaders import IntegrityError
from kheaders._errors import ConfigurationError, DeserializationError, ProcessingError
from kheaders._model.headers import received
from kheaders._offsets import encode_done
from kheaders.deadletter import DeadLetter
from kheaders.deadletter import spring as sh
from kheaders.processing import RetryTopics
from kheaders.processing._core import Core
from kheaders.processing._engine import AGAIN_AFTER_MS, Engine
from kheaders.processing._observe import Observer
from kheaders.processing._steps import (
    DEAD_LETTER,
    RETRY,
    Acknowledged,
    Assigned,
    Closing,
    Commit,
    Committed,
    Failed,
    Handle,
    Handled,
    HandleEach,
    Lost,
    Pause,
    Polled,
    Publish,
    Purge,
    Resume,
    Revoked,
    Stop,
    StopRequested,
    Tick,
    Unreadable,
)

T0 = 1_700_000_000_000
"""The fake clock's start (epoch ms)."""


def handler(msg: Message) -> None:
    """A handler the engine names in its steps (never called here)."""


def other(msg: Message) -> None:
    """A second handler, for routes."""


def record(
    offset: int,
    *,
    topic: str = "orders",
    partition: int = 0,
    key: bytes | None = b"k",
    value: bytes | None = b"v",
    headers: list[tuple[str, bytes | None]] | None = None,
    ts: int = T0 - 5000,
) -> Message:
    return Message(
        topic=topic,
        partition=partition,
        offset=offset,
        key=key,
        value=value,
        headers=received(headers or []),
        timestamp=(1, ts),
    )


def retry_record(
    offset: int, *, due: int, attempt: int = 2, topic: str = "orders-retry"
) -> Message:
    return record(
        offset,
        topic=topic,
        headers=[
            (sh.ATTEMPTS, sh.encode_int(attempt)),
            (sh.BACKOFF_TIMESTAMP, sh.encode_big_integer(due)),
        ],
    )


def error_event(code: int) -> Message:
    return Message(topic="orders", partition=0, offset=0, error=KafkaError(code))


def make(
    *,
    handler_: Any = handler,
    concurrent: bool = False,
    keep_timestamps: bool = False,
    commit_interval: float = 1.0,
    topics: tuple[str, ...] = ("orders",),
    **rules: Any,
) -> Engine:
    options: dict[str, Any] = {
        "handlers": None,
        "route_by": None,
        "filter": None,
        "retry": None,
        "dead_letter": None,
        "key_de": None,
        "value_de": None,
        "group": "g",
        **rules,
    }
    core = Core(list(topics), handler_, **options)
    engine = Engine(
        core,
        Observer("g"),
        commit_interval=commit_interval,
        concurrent=concurrent,
        keep_timestamps=keep_timestamps,
    )
    engine.send(Tick(T0))  # the commit clock starts
    return engine


def commit_at(engine: Engine, now: int) -> dict[tuple[str, int], tuple[int, str | None]]:
    """What a Tick at ``now`` commits: partition -> (offset, metadata)."""
    out = {}
    for step in engine.send(Tick(now)):
        if isinstance(step, Commit):
            engine.send(Committed(step.offsets))
            out.update({(tp.topic, tp.partition): (tp.offset, tp.metadata) for tp in step.offsets})
    return out


def only(steps: list[Any], kind: type) -> Any:
    assert len(steps) == 1, steps
    assert isinstance(steps[0], kind), steps
    return steps[0]


def handle(engine: Engine, msg: Message, now: int = T0) -> Handle:
    """Poll ``msg`` alone: the Handle its failure is reported with (short way or not)."""
    step = only(engine.send(Polled([msg], now)), HandleEach | Handle)
    return step.one(msg) if isinstance(step, HandleEach) else step


# -- reading and handling -------------------------------------------------------------------


def test_plain_records_take_the_short_way_and_are_committed_once_the_interval_passed() -> None:
    engine = make()
    msgs = [record(i) for i in range(3)]
    run = only(engine.send(Polled(msgs, T0)), HandleEach)
    assert run.records == msgs
    assert run.handler is handler
    assert commit_at(engine, T0 + 2000) == {}  # nothing handled yet: nothing to commit
    engine.send(Handled(msgs))
    assert commit_at(engine, T0 + 2500) == {}  # the interval since the last commit runs
    assert commit_at(engine, T0 + 4000) == {("orders", 0): (3, None)}
    assert commit_at(engine, T0 + 6000) == {}  # nothing new: no second commit


def test_the_commit_never_passes_a_record_in_hand() -> None:
    engine = make(retry=RetryTopics(delays=[1]))
    msgs = [record(i) for i in range(4)]
    run = only(engine.send(Polled(msgs, T0)), HandleEach)
    engine.send(Handled(msgs[:1]))
    pub = only(engine.send(Failed(run.one(msgs[1]), ValueError("x"), T0)), Publish)
    engine.send(Handled(msgs[2:]))
    assert commit_at(engine, T0 + 1000) == {
        ("orders", 0): (1, encode_done(1, [1], 4))
    }  # stops at the failed record; the two handled past it travel in the metadata
    engine.send(Acknowledged(pub, None, T0 + 1000))
    assert commit_at(engine, T0 + 2000) == {("orders", 0): (4, None)}


def test_a_filter_skips_and_commits_a_record_without_deserializing_it() -> None:
    seen: list[bytes] = []

    def value_de(topic: str, headers: Any, data: bytes) -> str:
        seen.append(data)
        return data.decode()

    engine = make(filter=lambda h: h.last_value("type") == b"keep", value_de=value_de)
    skipped = record(0, headers=[("type", b"drop")], value=b"skipped")
    kept = record(1, headers=[("type", b"keep")], value=b"kept")
    run = only(engine.send(Polled([skipped, kept], T0)), HandleEach)
    assert run.records == [kept]
    step = run.one(kept)
    assert kept.value() == "kept"
    assert step.raw == (b"k", b"kept")
    assert seen == [b"kept"]
    engine.send(Handled([kept]))
    assert commit_at(engine, T0 + 1000) == {("orders", 0): (2, None)}


@pytest.mark.parametrize("rules", [{}, {"filter": lambda h: True}])
def test_records_come_one_by_one_when_traced_else_in_one_run(rules: dict[str, Any]) -> None:
    from opentelemetry.sdk.trace import TracerProvider

    msgs = [record(0), record(1)]
    assert only(make(**rules).send(Polled(msgs, T0)), HandleEach).records == msgs
    traced = make(**rules)
    traced.observer = Observer("g", tracer_provider=TracerProvider())
    steps = traced.send(Polled(msgs, T0))
    assert [(type(s), s.record) for s in steps] == [(Handle, msgs[0]), (Handle, msgs[1])]


def test_routes_pick_the_handler_by_the_last_header_value_else_the_default() -> None:
    engine = make(handlers={"b": other}, route_by="type")
    by_route = record(0, headers=[("type", b"a"), ("type", b"b")])
    default = record(1, headers=[("type", b"z")])
    steps = engine.send(Polled([by_route, default], T0))
    assert [(s.records, s.handler) for s in steps] == [([by_route], other), ([default], handler)]


def test_a_record_no_route_takes_goes_straight_to_the_dead_letter_topic() -> None:
    engine = make(handler_=None, handlers={"a": other}, route_by="type", retry=RetryTopics())
    pub = only(engine.send(Polled([record(0, headers=[("type", b"z")])], T0)), Publish)
    assert (pub.topic, pub.kind) == ("orders-dlt", DEAD_LETTER)
    assert isinstance(pub.error, ProcessingError)
    assert "matches no route" in str(pub.error)


@pytest.mark.parametrize("kind", [ValueError, IntegrityError])
def test_a_deserializer_failure_is_dead_lettered_with_the_consumed_bytes(kind: type) -> None:
    def value_de(topic: str, headers: Any, data: bytes) -> object:
        if kind is IntegrityError:
            raise IntegrityError("protected record refused: bad tag", message=None, field="value")
        raise ValueError("not json: " + data.decode())

    engine = make(value_de=value_de, retry=RetryTopics(delays=[1, 2]))
    pub = only(engine.send(Polled([record(0, key=b"k1", value=b"raw")], T0)), Publish)
    assert (pub.topic, pub.kind, pub.key, pub.value) == ("orders-dlt", DEAD_LETTER, b"k1", b"raw")
    assert type(pub.error) is (IntegrityError if kind is IntegrityError else DeserializationError)
    assert "value deserializer failed" in str(pub.error)
    assert ("bad tag" in str(pub.error)) == (kind is IntegrityError)  # never the bytes
    assert "raw" not in str(pub.error)


def test_a_key_deserializer_runs_first_and_neither_applies_when_the_value_fails() -> None:
    def value_de(topic: str, headers: Any, data: bytes) -> object:
        raise ValueError("bad")

    engine = make(key_de=lambda t, h, d: d.decode(), value_de=value_de, dead_letter=DeadLetter())
    msg = record(0, key=b"k1", value=b"raw")
    pub = only(engine.send(Polled([msg], T0)), Publish)
    assert (msg.key(), msg.value()) == (b"k1", b"raw")
    assert pub.error.field == "value"


# -- failures, attempts and due times -------------------------------------------------------


def test_a_failure_goes_to_a_retry_topic_due_after_its_delay_then_to_the_dead_letter_topic() -> (
    None
):
    engine = make(retry=RetryTopics(delays=[1, 5]))
    msg = record(0)
    run = only(engine.send(Polled([msg], T0)), HandleEach)
    first = only(engine.send(Failed(run.one(msg), ValueError("x"), T0)), Publish)
    assert (first.topic, first.kind, first.partition) == ("orders-retry-1000", RETRY, -1)
    headers = dict(first.headers)
    assert sh.decode_attempts(headers[sh.ATTEMPTS]) == 2
    assert sh.decode_timestamp(headers[sh.BACKOFF_TIMESTAMP]) == T0 + 1000
    assert first.timestamp == 0  # stamped when sent, as Spring's are
    second = retry_record(0, due=T0, attempt=2, topic="orders-retry-1000")
    step = handle(engine, second, T0 + 1000)
    assert step.attempt == 2
    again = only(engine.send(Failed(step, ValueError("x"), T0 + 1000)), Publish)
    assert again.topic == "orders-retry-5000"
    assert sh.decode_timestamp(dict(again.headers)[sh.BACKOFF_TIMESTAMP]) == T0 + 6000
    third = retry_record(0, due=T0, attempt=3, topic="orders-retry-5000")
    step = handle(engine, third, T0 + 6000)
    last = only(engine.send(Failed(step, ValueError("x"), T0 + 6000)), Publish)
    assert (last.topic, last.kind, last.attempt) == ("orders-dlt", DEAD_LETTER, 3)


def test_a_not_retryable_error_goes_straight_to_the_dead_letter_topic() -> None:
    engine = make(retry=RetryTopics(delays=[1], not_retryable=(KeyError,)))
    msg = record(0)
    run = only(engine.send(Polled([msg], T0)), HandleEach)
    pub = only(engine.send(Failed(run.one(msg), KeyError("x"), T0)), Publish)
    assert pub.topic == "orders-dlt"


def test_a_failure_with_nowhere_to_go_stops_with_nothing_committed_past_it() -> None:
    engine = make()
    msgs = [record(0), record(1)]
    run = only(engine.send(Polled(msgs, T0)), HandleEach)
    engine.send(Handled(msgs[:1]))
    stop = only(engine.send(Failed(run.one(msgs[1]), ValueError("boom"), T0)), Stop)
    assert isinstance(stop.error, ProcessingError)
    assert "boom" in str(stop.error)
    assert engine.stopping
    assert engine.send(Polled([record(2)], T0)) == []  # nothing more is started
    assert only(engine.send(Closing(0, T0)), Commit).offsets == [TopicPartition("orders", 0, 1)]


def test_in_place_attempts_come_first_with_their_delay_then_the_retry_topic() -> None:
    engine = make(retry=RetryTopics(delays=[1], in_place=2, in_place_delay=0.25))
    msg = record(0)
    step = handle(engine, msg)
    for tries in (1, 2):
        step = only(engine.send(Failed(step, ValueError("x"), T0)), Handle)
        assert (step.tries, step.delay, step.attempt) == (tries, 0.25, 1)
        assert engine.tries[id(msg)] == tries  # what delivery(msg) tells the handler
    pub = only(engine.send(Failed(step, ValueError("x"), T0)), Publish)
    assert pub.topic == "orders-retry"
    assert id(msg) not in engine.tries


@pytest.mark.parametrize("concurrent", [False, True])
def test_a_record_handled_at_its_in_place_attempt_is_committed(concurrent: bool) -> None:
    engine = make(concurrent=concurrent, retry=RetryTopics(delays=[1], in_place=1))
    msg = record(0)
    run = only(engine.send(Polled([msg], T0)), HandleEach)
    again = only(engine.send(Failed(run.one(msg), ValueError("x"), T0)), Handle)
    engine.send(Handled([again.record]))
    assert not engine.tries
    assert commit_at(engine, T0 + 1000) == {("orders", 0): (1, None)}


def test_in_place_attempts_skip_not_retryable_errors_and_stop_when_stopped() -> None:
    engine = make(retry=RetryTopics(delays=[], in_place=3, not_retryable=(KeyError,)))
    msg = record(0)
    step = handle(engine, msg)
    assert only(engine.send(Failed(step, KeyError("x"), T0)), Publish).topic == "orders-dlt"
    engine.send(StopRequested())
    assert engine.send(Failed(step, ValueError("x"), T0)) == []  # left for the next run


@pytest.mark.parametrize("read_ahead", [False, True])
def test_a_retry_record_not_yet_due_pauses_its_partition_and_seeks_back_to_it(
    read_ahead: bool,
) -> None:
    engine = make(retry=RetryTopics(delays=[2]))
    engine.read_ahead = read_ahead
    early = retry_record(7, due=T0 + 2000)
    behind = retry_record(8, due=T0 + 2000)
    main = record(3)
    steps = engine.send(Polled([early, behind, main], T0))
    pause, run = steps
    assert pause == Pause(TopicPartition("orders-retry", 0, 7), T0 + 2000)
    assert isinstance(run, HandleEach)
    assert run.records == [main]
    assert engine.wait(5.0, T0) == pytest.approx(2.0)
    assert engine.send(Tick(T0 + 1000)) == []
    resume = only(engine.send(Tick(T0 + 2000)), Resume)
    assert resume.partitions == [TopicPartition("orders-retry", 0)]
    ahead = retry_record(9, due=T0)  # read ahead before the seek took effect
    if read_ahead:  # dropped: read again after the seek
        assert engine.send(Polled([ahead], T0 + 2000)) == []
    else:  # a consumer that never reads ahead past a seek: nothing is dropped
        assert only(engine.send(Polled([ahead], T0 + 2000)), HandleEach).records == [ahead]
    steps = engine.send(Polled([retry_record(7, due=T0 + 2000), ahead], T0 + 2000))
    assert [m.offset() for s in steps for m in s.records] == [7, 9]


def test_a_due_time_far_off_is_cut_so_no_partition_stalls_for_good() -> None:
    engine = make(retry=RetryTopics(delays=[2]))
    pause = only(engine.send(Polled([retry_record(0, due=T0 + 10**12)], T0)), Pause)
    assert pause.due == T0 + 60_000


def test_the_delivery_count_a_driver_passes_is_the_attempt() -> None:
    engine = make(retry=RetryTopics(delays=[1, 1]))
    msg = record(0)
    step = only(engine.send(Polled([msg], T0, attempts=[3])), HandleEach).one(msg)
    assert step.attempt == 3
    assert only(engine.send(Failed(step, ValueError(), T0)), Publish).kind == DEAD_LETTER


def test_a_failure_unpublished_is_handled_again_later_with_its_consumed_bytes() -> None:
    engine = make(value_de=lambda t, h, d: d.decode(), retry=RetryTopics(delays=[1]))
    msg = record(0, value=b"raw")
    step = handle(engine, msg)
    assert msg.value() == "raw"  # deserialized; its failure republishes the consumed bytes
    pub = only(engine.send(Failed(step, ValueError(), T0)), Publish)
    assert pub.value == b"raw"
    engine.send(Acknowledged(pub, "broker down", T0))
    assert commit_at(engine, T0 + 999) == {}  # never committed meanwhile
    assert engine.wait(5.0, T0) == pytest.approx(AGAIN_AFTER_MS / 1000)
    again = only(engine.send(Tick(T0 + AGAIN_AFTER_MS)), HandleEach)
    assert again.records == [msg]
    assert msg.value() == "raw"
    assert again.one(msg).raw == (b"k", b"raw")
    engine.send(Handled([msg]))
    assert commit_at(engine, T0 + 3000) == {("orders", 0): (1, None)}


def test_publications_keep_the_original_timestamp_when_told() -> None:
    engine = make(keep_timestamps=True, dead_letter=DeadLetter())
    msg = record(0, ts=T0 - 1234)
    step = handle(engine, msg)
    assert only(engine.send(Failed(step, ValueError(), T0)), Publish).timestamp == T0 - 1234


def test_a_record_the_consumer_could_not_read_is_dead_lettered() -> None:
    engine = make(retry=RetryTopics())
    msg = record(4, key=b"k", value=b"v")
    error = DeserializationError("unreadable headers", message=msg, field="headers")
    pub = only(engine.send(Unreadable(error, T0)), Publish)
    assert (pub.topic, pub.attempt, pub.value) == ("orders-dlt", 1, b"v")


# -- consumer errors, rebalances, stopping --------------------------------------------------


@pytest.mark.parametrize(
    ("code", "kind", "text"),
    [
        (KafkaError._MAX_POLL_EXCEEDED, ProcessingError, "max.poll.interval.ms"),
        (KafkaError.INVALID_SESSION_TIMEOUT, ConfigurationError, "session.timeout.ms"),
    ],
)
def test_a_consumer_error_that_cannot_pass_stops_with_a_clear_error(
    code: int, kind: type, text: str
) -> None:
    engine = make()
    stop = only(engine.send(Polled([error_event(code)], T0)), Stop)
    assert isinstance(stop.error, kind)
    assert text in str(stop.error)


def test_other_consumer_errors_are_only_logged() -> None:
    engine = make()
    assert engine.send(Polled([error_event(KafkaError._PARTITION_EOF)], T0)) == []
    assert engine.send(Polled([error_event(KafkaError._TRANSPORT)], T0)) == []
    assert not engine.stopping


def test_a_revoke_commits_its_partitions_and_forgets_them_a_loss_commits_nothing() -> None:
    engine = make(retry=RetryTopics(delays=[1]))
    a, b = record(0, partition=0), record(0, partition=1)
    run = only(engine.send(Polled([a, b], T0)), HandleEach)
    engine.send(Handled([a]))
    pub = only(engine.send(Failed(run.one(b), ValueError(), T0)), Publish)
    commit = only(engine.send(Revoked({("orders", 0)})), Commit)
    assert commit.sync
    assert commit.offsets == [TopicPartition("orders", 0, 1)]
    engine.send(Lost({("orders", 1)}))
    engine.send(Acknowledged(pub, "gone", T0))  # its partition is someone else's now
    assert engine.send(Tick(T0 + 5000)) == []  # not handled again, nothing to commit


def test_records_a_previous_run_settled_are_skipped_after_an_assignment() -> None:
    engine = make()
    metadata = encode_done(5, [5], 8)  # 6 and 7 settled by the previous run
    engine.send(Assigned([TopicPartition("orders", 0, 5, metadata=metadata)]))
    steps = engine.send(Polled([record(i) for i in range(5, 9)], T0))
    assert [m.offset() for s in steps for m in s.records] == [5, 8]


def test_a_stop_purges_unsent_publications_and_commits_what_was_settled() -> None:
    engine = make(dead_letter=DeadLetter())
    msgs = [record(0), record(1)]
    run = only(engine.send(Polled(msgs, T0)), HandleEach)
    engine.send(Handled(msgs[:1]))
    only(engine.send(Failed(run.one(msgs[1]), ValueError(), T0)), Publish)
    assert only(engine.send(StopRequested()), Stop).error is None
    purge, commit = engine.send(Closing(1, T0))
    assert isinstance(purge, Purge)
    assert commit == Commit([TopicPartition("orders", 0, 1)], sync=True)
    assert make().send(Closing(0, T0)) == []


def test_concurrent_records_settled_out_of_order_hold_the_commit_at_the_oldest() -> None:
    engine = make(concurrent=True)
    msgs = [record(i, key=bytes([i])) for i in range(3)]
    run = only(engine.send(Polled(msgs, T0)), HandleEach)  # one run; in hand until reported
    assert run.records == msgs
    engine.send(Handled([msgs[2], msgs[1]]))  # a worker's run, out of the read order
    assert commit_at(engine, T0 + 1000) == {("orders", 0): (0, encode_done(0, [0], 3))}
    engine.send(Handled([msgs[0]]))
    assert commit_at(engine, T0 + 2000) == {("orders", 0): (3, None)}


def test_the_commit_point_is_there_at_any_time_for_a_transaction() -> None:
    engine = make()
    msgs = [record(0), record(1)]
    engine.send(Handled(only(engine.send(Polled(msgs, T0)), HandleEach).records))
    assert engine.commit_point() == [TopicPartition("orders", 0, 2)]  # no interval waited
    engine.send(Committed(engine.commit_point()))
    assert engine.commit_point() == []


@pytest.mark.parametrize("kind", [ValueError, IntegrityError])
def test_the_consumer_and_the_engine_follow_one_deserialization_rule(kind: type) -> None:
    from kheaders import Consumer

    class Refusing:
        def deserialize(self, topic: str, headers: Any, data: bytes) -> object:
            if kind is IntegrityError:
                raise IntegrityError("protected record refused: bad tag", message=None, field="v")
            raise ValueError("not json: " + data.decode())

    consumer = Consumer(
        {"bootstrap.servers": "localhost:1", "group.id": "g"}, value_deserializer=Refusing()
    )
    try:
        by_consumer = Message(topic="orders", partition=0, offset=3, key=b"k", value=b"raw")
        with pytest.raises(DeserializationError) as raised:
            consumer._prepare(by_consumer)
    finally:
        consumer.close()
    engine = make(value_de=Refusing().deserialize, dead_letter=DeadLetter())
    pub = only(engine.send(Polled([record(3, value=b"raw")], T0)), Publish)
    assert type(raised.value) is type(pub.error)
    assert str(raised.value) == str(pub.error)
    assert (by_consumer.key(), by_consumer.value()) == (b"k", b"raw")  # untouched
