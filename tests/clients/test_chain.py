"""The interceptor chain: hook sorting, Java's failure policy, counters, strict mode, close."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import Message, TopicPartition

from kheaders import Headers, ProducerRecord, RecordMetadata
from kheaders._client.chain import CONSUMER_HOOKS, PRODUCER_HOOKS
from kheaders.hooks import InterceptorChain
from tests.support.interceptors import Misspelled, Recorder


class Boom:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        raise ValueError("boom")


class ReturnsNone:
    def on_send(self, record: ProducerRecord) -> Any:
        record.headers.add("touched-by-none", b"x")
        return None


class Replace:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        return ProducerRecord(record.topic, b"replaced", record.key, Headers(record.headers))


def test_on_send_runs_in_order_and_each_sees_the_previous_result() -> None:
    a, b = Recorder("a"), Recorder("b")
    out = InterceptorChain([a, b]).send(ProducerRecord("t", b"v"))
    assert [k for k, _ in out.headers] == ["a", "b"]
    assert b.sent[0] is a.sent[0]


def test_failing_on_send_is_skipped_and_chain_continues_with_last_good_record() -> None:
    before, after = Recorder("before"), Recorder("after")
    chain = InterceptorChain([before, Boom(), Replace(), ReturnsNone(), after])
    record = ProducerRecord("t", b"v")
    out = chain.send(record)
    assert out.value == b"replaced"  # Replace's result, kept after ReturnsNone failed
    assert after.sent == [out]
    assert chain.errors == {
        "Recorder": 0,
        "Boom": 1,
        "Replace": 0,
        "ReturnsNone": 1,
        "Recorder#2": 0,
    }


def test_strict_chain_propagates_the_first_error() -> None:
    chain = InterceptorChain([Boom()], strict=True)
    with pytest.raises(ValueError, match="boom"):
        chain.send(ProducerRecord("t", b"v"))


def test_strict_chain_rejects_on_send_returning_none() -> None:
    with pytest.raises(TypeError, match="NoneType"):
        InterceptorChain([ReturnsNone()], strict=True).send(ProducerRecord("t"))


def test_interceptor_with_no_hook_is_rejected_naming_it_and_its_misspelling() -> None:
    with pytest.raises(TypeError, match=r"Misspelled.*on_sned \(misspelled\?\)"):
        InterceptorChain([Misspelled()])


def test_class_instead_of_instance_is_rejected() -> None:
    with pytest.raises(TypeError, match="is a class: pass an instance"):
        InterceptorChain([Recorder])


def test_producer_chain_rejects_a_consumer_only_interceptor() -> None:
    class OnlyConsume:
        def on_consume(self, messages: list[Message]) -> list[Message]:
            return messages

    InterceptorChain([OnlyConsume()], hooks=CONSUMER_HOOKS)
    with pytest.raises(TypeError, match="on_send, on_acknowledgement"):
        InterceptorChain([OnlyConsume()], hooks=PRODUCER_HOOKS)


def test_hooks_are_sorted_per_hook_once() -> None:
    class SendOnly:
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            return record

    chain = InterceptorChain([SendOnly(), Recorder()])
    assert [n for n, _ in chain.on_send] == ["SendOnly", "Recorder"]
    assert [n for n, _ in chain.on_acknowledgement] == ["Recorder"]
    assert not InterceptorChain([])
    assert InterceptorChain([]).on_send == ()


def test_acknowledge_calls_every_interceptor_even_after_one_fails() -> None:
    class AckBoom:
        def on_acknowledgement(self, *args: object) -> None:
            raise RuntimeError("ack boom")

    first, last = Recorder(), Recorder()
    chain = InterceptorChain([first, AckBoom(), last])
    md = RecordMetadata("t", 0, 5)
    chain.acknowledge(md, None, Headers())
    assert len(first.acks) == len(last.acks) == 1
    assert chain.errors["AckBoom"] == 1


def test_on_consume_filter_and_failure_keep_last_good_batch() -> None:
    class DropOdd:
        def on_consume(self, messages: list[Message]) -> list[Message]:
            return [m for m in messages if (m.offset() or 0) % 2 == 0]

    class Broken:
        def on_consume(self, messages: list[Message]) -> list[Message]:
            raise KeyError("x")

    msgs = [Message(topic="t", partition=0, offset=i, value=b"v") for i in range(4)]
    chain = InterceptorChain([DropOdd(), Broken()])
    assert [m.offset() for m in chain.consume(msgs)] == [0, 2]
    assert chain.errors["Broken"] == 1


def test_on_commit_failure_is_counted_and_others_still_run() -> None:
    class CommitBoom:
        def on_commit(self, offsets: list[TopicPartition]) -> None:
            raise OSError("down")

    rec = Recorder()
    chain = InterceptorChain([CommitBoom(), rec])
    chain.commit([TopicPartition("t", 0, 3)])
    assert rec.commits[0][0].offset == 3
    assert chain.errors["CommitBoom"] == 1


def test_close_closes_every_interceptor_even_if_some_raise() -> None:
    class CloseBoom:
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            return record

        def close(self) -> None:
            raise RuntimeError("close boom")

    a, b = Recorder(), Recorder()
    chain = InterceptorChain([a, CloseBoom(), b])
    chain.close()
    assert (a.closed, b.closed) == (1, 1)
    assert chain.errors["CloseBoom"] == 1
    strict = InterceptorChain([CloseBoom(), a], strict=True)
    with pytest.raises(RuntimeError, match="close boom"):
        strict.close()
    assert a.closed == 2


def test_failure_is_logged_with_interceptor_topic_and_error() -> None:
    import structlog.testing

    with structlog.testing.capture_logs() as logs:
        InterceptorChain([Boom()]).send(ProducerRecord("orders", b"v"))
    assert logs[0]["interceptor"] == "Boom"
    assert logs[0]["topic"] == "orders"
    assert logs[0]["error"] == "ValueError: boom"
