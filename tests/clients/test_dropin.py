"""What a confluent-kafka user keeps when the client is kheaders' (issue 12), beyond the
contract suite of tests/compat: the header memo of the one produce path, produce_batch with
headers, wrapping with a config, the asyncio refusal, and errors that name what is wrong."""

from __future__ import annotations

from typing import Any

import confluent_kafka
import confluent_kafka.aio
import pytest
from confluent_kafka import TopicPartition
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import kheaders
from kheaders import Headers, InvalidNameError, Producer, wrap_consumer, wrap_producer
from kheaders._client.producer import sender_of
from kheaders.interceptors.tracing import TracingConsumerInterceptor
from tests.support.interceptors import Recorder

UNREACHABLE = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}


def spied(p: Producer) -> list[Any]:
    """What ``p`` hands to librdkafka as headers, one entry per accepted record."""
    sent: list[Any] = []
    real = p.wrapped.produce

    def spy(*args: Any) -> None:
        real(*args)
        sent.append(args[-1])

    sender_of(p).hand = spy
    return sent


def test_a_reused_header_list_is_checked_again_once_it_changes() -> None:
    p = Producer(UNREACHABLE)
    sent = spied(p)
    h = [("memo-key", b"1")]
    p.produce("t", b"v", headers=h)  # a key seen for the first time: the model checks it
    p.produce("t", b"v", headers=h)  # plain now: librdkafka gets the caller's list itself
    p.produce("t", b"v", headers=h)  # equal to the last list that passed: no second look
    assert sent == [h, h, h]
    assert sent[1] is h
    assert sent[2] is h
    h.append(("bad\x00key", b"2"))  # the same list object, changed in place
    with pytest.raises(InvalidNameError):
        p.produce("t", b"v", headers=h)
    h[1] = (b"k", b"2")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="header key must be str"):
        p.produce("t", b"v", headers=h)
    assert len(sent) == 3
    p.close(timeout=0)


def test_a_list_equal_to_the_memo_but_not_plain_is_sent_in_the_models_form() -> None:
    p = Producer(UNREACHABLE)
    sent = spied(p)
    p.produce("t", b"v", headers=[("a", b"1")])
    p.produce("t", b"v", headers=[("a", bytearray(b"1"))])  # == [("a", b"1")]
    assert sent[1] == [("a", b"1")]
    assert type(sent[1][0][1]) is bytes
    p.close(timeout=0)


def test_a_value_without_a_serializer_is_named_with_its_topic_and_type() -> None:
    p = Producer(UNREACHABLE)
    with pytest.raises(TypeError, match=r"value of a record to topic 'orders' is dict.*serializer"):
        p.produce("orders", {"id": 7})
    with pytest.raises(TypeError, match=r"key of a record to topic 'orders' is int"):
        p.produce("orders", b"v", 7)
    q = Producer(UNREACHABLE, interceptors=[Recorder()])
    with pytest.raises(TypeError, match=r"value of a record to topic 'orders' is dict"):
        q.produce("orders", {"id": 7})
    p.close(timeout=0)
    q.close(timeout=0)


@pytest.mark.integration
def test_produce_batch_carries_headers_and_runs_interceptors(bootstrap: str, topic: str) -> None:
    rec = Recorder()
    with Producer({"bootstrap.servers": bootstrap}, interceptors=[rec]) as p:
        batch: list[dict[str, Any]] = [
            {"value": b"1", "headers": [("trace", b"t1")]},
            {"value": b"2", "key": b"k", "headers": {"h": "v"}},
            {"value": b"3", "headers": [(b"bad", b"x")]},
        ]
        assert p.produce_batch(topic, batch) == 2
        assert "_error" not in batch[0]
        assert isinstance(batch[2]["_error"], TypeError)
        assert p.flush(10) == 0
    assert len(rec.sent) == 2  # bad headers are refused before on_send, as by produce()
    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "batch"})
    c.assign([TopicPartition(topic, 0, 0)])
    got: list[Any] = []
    for _ in range(100):
        got += [m for m in c.consume(2, 0.2) if m.error() is None]
        if len(got) >= 2:
            break
    c.close()
    assert [(m.value(), m.headers()) for m in got] == [
        (b"1", [("trace", b"t1"), ("rec", b"1")]),
        (b"2", [("h", b"v"), ("rec", b"1")]),
    ]


def test_produce_batch_reports_a_full_queue_per_message() -> None:
    p = Producer({**UNREACHABLE, "queue.buffering.max.messages": 1})
    batch: list[dict[str, Any]] = [{"value": b"1"}, {"value": b"2", "headers": [("a", b"1")]}]
    assert p.produce_batch("t", batch) == 1
    assert batch[1]["_error"].code() == confluent_kafka.KafkaError._QUEUE_FULL
    with pytest.raises(TypeError, match="must be a list"):
        p.produce_batch("t", ({"value": b"1"},))  # type: ignore[arg-type]
    p.close(timeout=0)


def test_asyncio_clients_are_refused_with_a_pointer_to_kheaders_aio() -> None:
    class FakeAIO:
        pass

    FakeAIO.__module__ = confluent_kafka.aio.AIOProducer.__module__
    for wrap in (wrap_producer, wrap_consumer):
        with pytest.raises(TypeError, match=r"asyncio FakeAIO: use kheaders\.aio"):
            wrap(FakeAIO())  # type: ignore[arg-type]


def test_wrapping_with_a_config_configures_what_it_names() -> None:
    raw = confluent_kafka.Producer(UNREACHABLE)
    config = {
        "client.id": "orders-service",
        "bootstrap.servers": "kafka:9092",
        "interceptor.classes": "tests.support.interceptors.Recorder",
        "kheaders.header.limits.max.headers": 1,  # kheaders' settings are read, too
    }
    Recorder.instances.clear()
    p = wrap_producer(raw, config=config)
    (rec,) = Recorder.instances
    assert rec.config == config  # configure() saw the config: client.id, bootstrap.servers
    assert p.interceptors.interceptors == (rec,)
    p.close(timeout=0)


EXPORTER = InMemorySpanExporter()
PROVIDER = TracerProvider()
PROVIDER.add_span_processor(SimpleSpanProcessor(EXPORTER))


class Tracing(TracingConsumerInterceptor):
    """The tracing consumer interceptor on this module's provider, named by dotted path."""

    def __init__(self) -> None:
        super().__init__(tracer_provider=PROVIDER)


@pytest.mark.integration
def test_wrapping_with_a_config_gives_tracing_the_attributes_of_a_built_client(
    bootstrap: str, topic: str
) -> None:
    with Producer({"bootstrap.servers": bootstrap}) as p:
        p.produce(topic, b"v")
    conf = {"bootstrap.servers": bootstrap, "group.id": "billing", "client.id": "billing-1"}
    raw = confluent_kafka.Consumer(conf)
    raw.assign([TopicPartition(topic, 0, 0)])
    EXPORTER.clear()
    wrap_config = {**conf, "interceptor.classes": f"{__name__}.Tracing"}
    with wrap_consumer(raw, config=wrap_config) as c:
        assert c.group_id == "billing"
        for _ in range(50):
            if c.consume(1, 0.2):
                break
    attrs = [dict(s.attributes or {}) for s in EXPORTER.get_finished_spans()]
    assert attrs
    assert attrs[0]["messaging.consumer.group.name"] == "billing"
    assert attrs[0]["messaging.client.id"] == "billing-1"


def test_delegated_methods_are_class_attributes_with_confluents_docs() -> None:
    for cls, client in (
        (kheaders.Producer, confluent_kafka.Producer),
        (kheaders.Consumer, confluent_kafka.Consumer),
    ):
        public = {n for n in dir(client) if not n.startswith("_")}
        assert public <= set(vars(cls)) | {"close", "poll"}
    assert kheaders.Consumer.unassign.__doc__ == confluent_kafka.Consumer.unassign.__doc__
    assert "list_topics" in dir(Producer)


def test_closed_headers_are_one_record_s_whatever_path_sends_them() -> None:
    for interceptors in ([], [Recorder()]):
        p = Producer(UNREACHABLE, interceptors=interceptors)
        h = Headers([("a", b"1")])
        p.produce("t", b"v", headers=h)
        with pytest.raises(kheaders.ReadOnlyHeadersError, match="change or send that"):
            p.produce("t", b"v", headers=h)
        p.close(timeout=0)
