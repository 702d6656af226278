"""ShareProcessor on the Apache Kafka broker: accept, release and redelivery by the broker's
delivery count, dead letter then reject, and no reject before the dead letter is stored."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import confluent_kafka
import pytest
from confluent_kafka import Message
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kheaders import ConfigurationError, StringDeserializer
from kheaders.processing import KHEADERS, DeadLetter, Redelivery, ShareProcessor
from kheaders.processing import spring_headers as sh
from tests.share.conftest import produce

pytestmark = pytest.mark.integration


@contextmanager
def running(processor: ShareProcessor) -> Iterator[ShareProcessor]:
    """``processor.run()`` in a thread until the block ends; its error is raised after."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            processor.run()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield processor
    finally:
        processor.stop()
        thread.join(60)
    assert not thread.is_alive()
    if errors:
        raise errors[0]


def wait_for(condition: Callable[[], bool], what: str, deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, f"not within {deadline} s: {what}"
        time.sleep(0.05)


def read_all(bootstrap: str, topic: str, n: int) -> list[Message]:
    """The first ``n`` records of ``topic`` (partition 0), read with plain confluent-kafka."""
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{topic}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    got: list[Message] = []
    end = time.monotonic() + 60
    while len(got) < n:
        assert time.monotonic() < end, f"only {len(got)} of {n} records in {topic}"
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg)
    consumer.close()
    return got


def _config(bootstrap: str, group: str) -> dict[str, object]:
    return {"bootstrap.servers": bootstrap, "group.id": group}


def test_success_accepts_and_a_retryable_failure_is_released_and_redelivered_with_its_count(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    seen: list[tuple[bytes, int | None]] = []
    when: list[float] = []

    def handle(msg: Message) -> None:
        seen.append((msg.value() or b"", msg.delivery_count()))
        if msg.value() == b"flaky":
            when.append(time.monotonic())
            if (msg.delivery_count() or 0) < 3:
                raise TimeoutError("downstream busy")

    produce(bootstrap, topic, [(None, b"fine", []), (None, b"flaky", [])])
    processor = ShareProcessor(
        _config(bootstrap, share_group()),
        [topic],
        handle,
        redelivery=Redelivery(attempts=4, delay=0.3),
    )
    with running(processor):
        wait_for(lambda: (b"flaky", 3) in seen, "the third delivery of the flaky record")
        produce(bootstrap, topic, [(None, b"sentinel", [])])
        wait_for(lambda: any(v == b"sentinel" for v, _ in seen), "the sentinel")
    assert [c for v, c in seen if v == b"flaky"] == [1, 2, 3]  # accepted on the third
    assert [c for v, c in seen if v == b"fine"] == [1]  # accepted: never again
    assert min(b - a for a, b in itertools.pairwise(when)) >= 0.3  # held, then released
    made = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap}).list_topics(
        timeout=30
    )
    # only the given topic's dead-letter topic: no retry topic read, none made for one
    assert f"{topic}-dlt" in made.topics
    assert not [t for t in made.topics if t.startswith(f"{topic}-retry")]


def test_each_delivery_gets_a_process_span_whose_attempt_is_the_delivery_count(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    done = threading.Event()

    def handle(msg: Message) -> None:
        if msg.delivery_count() == 1:
            raise TimeoutError("try again")
        done.set()

    produce(bootstrap, topic, [(None, b"v", [])])
    processor = ShareProcessor(
        _config(bootstrap, share_group()), [topic], handle, tracer_provider=provider
    )
    with running(processor):
        wait_for(done.is_set, "the second delivery handled")
    provider.shutdown()
    spans = [s for s in exporter.get_finished_spans() if s.name == f"process {topic}"]
    assert [(s.attributes or {}).get("kheaders.attempt") for s in spans] == [1, 2]


def test_the_last_attempt_publishes_a_dead_letter_with_kheaders_headers_then_rejects(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    seen: list[tuple[bytes, int | None]] = []

    def handle(msg: Message) -> None:
        seen.append((msg.value() or b"", msg.delivery_count()))
        if msg.value() == b"poison":
            raise ValueError("cannot price this order")

    produce(bootstrap, topic, [(b"k", b"poison", [("app", b"1"), ("app", b"2")])])
    group = share_group()
    processor = ShareProcessor(
        _config(bootstrap, group),
        [topic],
        handle,
        redelivery=Redelivery(attempts=2),
        dead_letter=DeadLetter(contract=KHEADERS),
    )
    with running(processor):
        (letter,) = read_all(bootstrap, f"{topic}-dlt", 1)
        produce(bootstrap, topic, [(None, b"sentinel", [])])
        wait_for(lambda: (b"sentinel", 1) in seen, "the sentinel")
    assert [c for v, c in seen if v == b"poison"] == [1, 2]  # rejected: no third delivery
    assert letter.key() == b"k"
    assert letter.value() == b"poison"
    headers = letter.headers() or []
    assert headers[:2] == [("app", b"1"), ("app", b"2")]
    got = dict(headers[2:])
    assert got["kheaders.dlt.original.topic"] == topic.encode()
    assert got["kheaders.dlt.original.offset"] == b"0"
    assert got["kheaders.dlt.consumer.group"] == group.encode()
    assert got["kheaders.dlt.error.type"] == b"builtins.ValueError"
    assert got["kheaders.dlt.error.message"] == b"cannot price this order"


def test_a_not_retryable_failure_is_dead_lettered_on_its_first_delivery_with_springs_headers(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    seen: list[tuple[bytes, int | None]] = []

    def handle(msg: Message) -> None:
        seen.append((msg.value() or b"", msg.delivery_count()))
        if msg.value() == b"bad":
            raise KeyError("no such customer")

    produce(bootstrap, topic, [(None, b"bad", [("trace", b"t")])])
    processor = ShareProcessor(
        _config(bootstrap, share_group()),
        [topic],
        handle,
        redelivery=Redelivery(attempts=3, not_retryable=(KeyError,)),
    )
    with running(processor):
        (letter,) = read_all(bootstrap, f"{topic}-dlt", 1)
        produce(bootstrap, topic, [(None, b"sentinel", [])])
        wait_for(lambda: (b"sentinel", 1) in seen, "the sentinel")
    assert [c for v, c in seen if v == b"bad"] == [1]
    got = dict(letter.headers() or [])
    assert got["trace"] == b"t"
    assert got[sh.ORIGINAL_TOPIC] == topic.encode()
    assert got[sh.EXCEPTION_FQCN] == b"builtins.KeyError"


def test_a_record_whose_dead_letter_cannot_be_published_is_released_never_rejected(
    bootstrap: str, topic: str, share_group: Callable[..., str], topic_factory: Callable[..., str]
) -> None:
    too_small = topic_factory(config={"max.message.bytes": "1"})  # refuses every record
    counts: list[int | None] = []

    def handle(msg: Message) -> None:
        counts.append(msg.delivery_count())
        raise ValueError("always")

    produce(bootstrap, topic, [(None, b"v", [])])
    processor = ShareProcessor(
        _config(bootstrap, share_group()),
        [topic],
        handle,
        redelivery=Redelivery(attempts=1),
        dead_letter=DeadLetter(topic=too_small),
        shutdown_timeout=5.0,
    )
    with running(processor):
        wait_for(lambda: 2 in counts, "a second delivery")
    assert counts[:2] == [1, 2]  # its one attempt failed, the dead letter too: released


def test_a_filtered_record_is_accepted_unhandled_and_a_bad_value_is_dead_lettered_at_once(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    seen: list[tuple[object, int | None]] = []

    def handle(msg: Message) -> None:
        seen.append((msg.value(), msg.delivery_count()))

    produce(
        bootstrap,
        topic,
        [
            (None, b"\xff", [("kind", b"order")]),  # not UTF-8: its deserializer fails
            (None, b"skip me", [("kind", b"noise")]),
            (None, b"kept", [("kind", b"order")]),
        ],
    )
    config = {**_config(bootstrap, share_group()), "value.deserializer": StringDeserializer()}
    processor = ShareProcessor(
        config,
        [topic],
        handle,
        filter=lambda headers: headers.last_value("kind") != b"noise",
        dead_letter=DeadLetter(contract=KHEADERS),
    )
    with running(processor):
        (letter,) = read_all(bootstrap, f"{topic}-dlt", 1)
        wait_for(lambda: ("kept", 1) in seen, "the kept record")
        produce(bootstrap, topic, [(None, b"sentinel", [])])
        wait_for(lambda: ("sentinel", 1) in seen, "the sentinel")
    assert seen == [("kept", 1), ("sentinel", 1)]  # noise accepted unhandled, never again
    assert letter.value() == b"\xff"  # the consumed bytes
    assert dict(letter.headers() or [])["kheaders.dlt.error.field"] == b"value"


def test_redelivery_that_does_not_fit_the_group_is_refused_at_start(
    bootstrap: str, topic: str, share_group: Callable[..., str]
) -> None:
    group = share_group(lock_ms=2000)  # the group's delivery limit stays Kafka's 5
    too_many = ShareProcessor(
        _config(bootstrap, group), [topic], print, redelivery=Redelivery(attempts=6)
    )
    with pytest.raises(ConfigurationError, match=r"attempts=6 is above .* \(5\)"):
        too_many.run()
    too_long = ShareProcessor(
        _config(bootstrap, group), [topic], print, redelivery=Redelivery(delay=1.5)
    )
    with pytest.raises(ConfigurationError, match=r"delay=1\.5 s .* \(2000 ms\)"):
        too_long.run()


SHARE_BAD: list[tuple[dict[str, object], str]] = [
    ({"dead_letter": None}, r"dead_letter: a share group.s last attempt .* not None"),
    ({"redelivery": [1, 2]}, r"redelivery: expected Redelivery"),
    ({"poll_timeout": -1}, r"poll_timeout"),
    ({"shutdown_timeout": "5"}, r"shutdown_timeout"),
    ({"handle_signals": "yes"}, r"handle_signals"),
    ({"producer_config": ["acks"]}, r"producer_config"),
    ({"dead_letter": False}, r"dead_letter: expected DeadLetter"),
    ({"filter": "yes"}, r"filter"),
    ({"route_by": "type"}, r"route_by"),
    ({"route_by": "type", "handlers": {"a": "on_a"}}, r"handlers\['a'\]: expected a function"),
    ({"keep_timestamps": 1}, r"keep_timestamps"),
    ({"tracer_provider": object()}, r"tracer_provider"),
    ({"meter_provider": "otel"}, r"meter_provider: expected an OpenTelemetry provider"),
    ({"retry": [1]}, r"retry: ShareProcessor takes no such option"),
    ({"batch_size": 10}, r"^batch_size: ShareProcessor takes no such option$"),
]


@pytest.mark.parametrize(("kwargs", "message"), SHARE_BAD)
def test_bad_arguments_are_refused_at_construction(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        ShareProcessor({"group.id": "g"}, ["t"], print, **kwargs)  # type: ignore[arg-type]


def test_every_option_of_the_share_driver_has_a_refusal_above() -> None:
    tested = {name for kwargs, _ in SHARE_BAD for name in kwargs}
    assert set(ShareProcessor.OPTIONS) - tested == set()


def test_bad_config_topics_and_handler_are_refused_at_construction() -> None:
    with pytest.raises(ConfigurationError, match=r"group\.id"):
        ShareProcessor({"bootstrap.servers": "h:9092"}, ["t"], print)
    with pytest.raises(ConfigurationError, match=r"share\.acknowledgement\.mode"):
        ShareProcessor({"group.id": "g", "share.acknowledgement.mode": "implicit"}, ["t"], print)
    with pytest.raises(ConfigurationError, match="topics"):
        ShareProcessor({"group.id": "g"}, "t", print)
    with pytest.raises(ConfigurationError, match="handler"):
        ShareProcessor({"group.id": "g"}, ["t"], None)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="attempts"):
        Redelivery(attempts=0)
    with pytest.raises(ConfigurationError, match="not_retryable"):
        Redelivery(not_retryable=("ValueError",))  # type: ignore[arg-type]
