"""Spring Kafka's ``@RetryableTopic`` and kheaders' Processor on the same retry topics.

One run, both sides at once, four source topics (interop/jvm SpringRetry.java is a plain
Spring listener with Spring's defaults, three attempts, back-off 1 s then 2 s; the
Processor uses ``RetryTopics(delays=[1, 2])``, the same topic names):

* ``a``: fails in Python on the source topic; Spring's listener fails on retry topics;
* ``b``: fails in Spring on the source topic; the Processor fails on retry topics;
* ``c``: Spring alone fails every time; ``d``: the Processor alone fails every time.

Each side leaves the records the other failed alone (it handles them without error), so
every hop of a and b is taken by the side the test names. docs/processing.md ("Side by
side with Spring Kafka") points at these tests.
"""

from __future__ import annotations

import io
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass, field

import pytest
from confluent_kafka import Message

from kheaders import Producer
from kheaders.broker import create_topic, fast_consumer_config
from kheaders.cli import main as cli_main
from kheaders.deadletter import spring as sh
from kheaders.processing import Processor, RetryTopics
from tests.interop.jvm import Event, Header, Jvm, b64, decoded, events
from tests.processing.helpers import Read, read_all

pytestmark = pytest.mark.integration

DAY_MS = 86_400_000
OWN: list[Header] = [
    ("dup", b"1"),
    ("nul", None),
    ("empty", b""),
    ("dup", b"2"),
    ("clé", b"\xff\x00"),
]
KEY, VALUE = b"order-1", b'{"id": 1}'
SUFFIXES = ("-retry-1000", "-retry-2000", "-dlt")


class HandlerFailed(ConnectionError):
    """What the Python handler raises (retryable)."""


@dataclass
class Handled:
    """One call of the Python handler."""

    topic: str
    headers: list[Header]
    at_ms: int


@dataclass
class Run:
    topics: dict[str, str]
    original: Read
    spring: list[Event]
    python: list[Handled] = field(default_factory=list)
    dead: dict[str, Read] = field(default_factory=dict)
    spring_group: str = ""
    python_group: str = ""

    def spring_on(self, topic: str) -> list[Event]:
        return events(self.spring, event="attempt", topic=topic)

    def python_on(self, topic: str) -> list[Handled]:
        return [h for h in self.python if h.topic == topic]


def last(headers: list[Header], name: str) -> bytes | None:
    found = [v for k, v in headers if k == name]
    return found[-1] if found else None


@pytest.fixture(scope="module")
def run(jvm: Jvm, bootstrap: str) -> Iterator[Run]:
    stem = f"spring-{uuid.uuid4().hex[:8]}"
    topics = {side: f"{stem}-{side}" for side in "abcd"}
    for main in topics.values():
        for name in (main, *(main + s for s in SUFFIXES)):
            create_topic(bootstrap, name)
    stamp = int(time.time() * 1000) - DAY_MS  # a day-old record: its dead letter must stay
    producer = Producer({"bootstrap.servers": bootstrap})
    for main in topics.values():
        producer.produce(main, VALUE, KEY, headers=OWN, timestamp=stamp)
    assert producer.flush(30) == 0
    [original] = read_all(bootstrap, topics["a"], 1)

    spring_group, python_group = f"{stem}-spring", f"{stem}-python"
    spring: list[Event] = []
    failure: list[BaseException] = []

    def java() -> None:
        try:
            spring.extend(
                jvm.run(
                    "spring-retry",
                    bootstrap,
                    spring_group,
                    "3",  # dead letters: a's and c's (Spring's), b's (kheaders')
                    "180",
                    f"{topics['a']}=retry",
                    f"{topics['b']}=main",
                    f"{topics['c']}=all",
                )
            )
        except BaseException as exc:
            failure.append(exc)

    result = Run(topics, original, spring, spring_group=spring_group, python_group=python_group)

    def handle(msg: Message) -> None:
        topic = msg.topic()
        assert topic is not None
        found = msg.headers()
        result.python.append(Handled(topic, list(found or []), int(time.time() * 1000)))  # type: ignore[arg-type]
        on_main = topic in topics.values()
        if (
            (topic.startswith(topics["a"]) and on_main)
            or (topic.startswith(topics["b"]) and not on_main)
            or topic.startswith(topics["d"])
        ):
            raise HandlerFailed(f"python handler failed on {topic}")

    processor = Processor(
        fast_consumer_config(bootstrap, python_group),
        [topics["a"], topics["b"], topics["d"]],
        handle,
        retry=RetryTopics(delays=[1, 2]),
        handle_signals=False,
    )
    thread = threading.Thread(target=java, name="spring")
    thread.start()
    runner = threading.Thread(target=processor.run, name="processor")
    runner.start()
    try:
        for side in "abcd":
            dlt = topics[side] + "-dlt"
            [result.dead[side]] = read_all(bootstrap, dlt, 1, timeout=180)
        thread.join(240)
        assert not thread.is_alive(), "the Spring run did not end"
        if failure:
            raise failure[0]
        yield result
    finally:
        processor.stop()
        runner.join(60)


# -- helpers over what both sides saw -------------------------------------------------------


def attempts(headers: list[Header]) -> int:
    return sh.decode_attempts(last(headers, sh.ATTEMPTS))


def due_ms(headers: list[Header]) -> int:
    due = sh.decode_timestamp(last(headers, sh.BACKOFF_TIMESTAMP))
    assert due is not None
    return due


def names(headers: list[Header]) -> list[str]:
    return [k for k, _ in headers]


ORIGIN = (
    sh.ORIGINAL_TOPIC,
    sh.ORIGINAL_PARTITION,
    sh.ORIGINAL_OFFSET,
    sh.ORIGINAL_TIMESTAMP,
    sh.ORIGINAL_TIMESTAMP_TYPE,
    sh.ORIGINAL_CONSUMER_GROUP,
)
FAILURE = (
    sh.EXCEPTION_FQCN,
    sh.EXCEPTION_CAUSE_FQCN,
    sh.EXCEPTION_MESSAGE,
    sh.EXCEPTION_STACKTRACE,
)
RETRY = (sh.ORIGINAL_TIMESTAMP_RETRY, sh.ATTEMPTS, sh.BACKOFF_TIMESTAMP)


# -- the hand-over, both ways -------------------------------------------------------------


def test_a_record_failed_in_kheaders_is_retried_by_spring_when_due_with_the_attempts_left(
    run: Run,
) -> None:
    a = run.topics["a"]
    [failed] = run.python_on(a)  # the Processor's one failure, on the source topic
    [first] = run.spring_on(a + "-retry-1000")
    headers = decoded(first["headers"])
    assert attempts(headers) == 2  # written by kheaders
    assert first["received_ms"] >= due_ms(headers)  # Spring waited for kheaders' due time
    assert due_ms(headers) >= failed.at_ms + 1000
    [second] = run.spring_on(a + "-retry-2000")
    assert attempts(decoded(second["headers"])) == 3  # Spring counted on from kheaders' 2
    assert second["received_ms"] >= due_ms(decoded(second["headers"]))
    dead = run.dead["a"].headers
    assert attempts(dead) == 4  # three deliveries in all: one in Python, two in Spring
    # the origin kheaders wrote at the first failure is kept by Spring at every hop
    assert last(dead, sh.ORIGINAL_TOPIC) == a.encode()
    assert last(dead, sh.ORIGINAL_CONSUMER_GROUP) == run.python_group.encode()
    assert dead[: len(OWN)] == OWN
    assert (run.dead["a"].key, run.dead["a"].value) == (KEY, VALUE)


def test_a_record_failed_in_spring_is_retried_by_kheaders_when_due_with_the_attempts_left(
    run: Run,
) -> None:
    b = run.topics["b"]
    [spring_failed] = run.spring_on(b)
    [first] = run.python_on(b + "-retry-1000")
    assert attempts(first.headers) == 2  # written by Spring
    assert first.at_ms >= due_ms(first.headers)  # kheaders waited for Spring's due time
    assert due_ms(first.headers) >= spring_failed["received_ms"] + 1000
    [second] = run.python_on(b + "-retry-2000")
    assert attempts(second.headers) == 3
    assert second.at_ms >= due_ms(second.headers)
    dead = run.dead["b"].headers
    assert attempts(dead) == 4
    assert last(dead, sh.ORIGINAL_TOPIC) == b.encode()
    assert last(dead, sh.ORIGINAL_CONSUMER_GROUP) == run.spring_group.encode()
    assert dead[: len(OWN)] == OWN


def test_springs_dead_letter_handler_reads_a_kheaders_dead_letter_as_written(run: Run) -> None:
    [got] = events(run.spring, event="dlt", topic=run.topics["b"] + "-dlt")
    assert decoded(got["headers"]) == run.dead["b"].headers
    assert (b64(got["key"]), b64(got["value"])) == (KEY, VALUE)


# -- the same failure's dead letters, header by header ------------------------------------


def test_dead_letters_of_one_failure_agree_on_origin_retry_state_and_the_records_own_headers(
    run: Run,
) -> None:
    spring, python = run.dead["c"], run.dead["d"]
    for dead, side in ((spring, "c"), (python, "d")):
        assert (dead.key, dead.value, dead.partition) == (KEY, VALUE, 0)
        assert dead.headers[: len(OWN)] == OWN  # first, in order, duplicates and None kept
        assert last(dead.headers, sh.ORIGINAL_TOPIC) == run.topics[side].encode()
        for name in FAILURE:
            assert last(dead.headers, name)
    assert set(names(spring.headers)) == set(names(python.headers))
    same: tuple[str, ...] = (sh.ORIGINAL_PARTITION, sh.ORIGINAL_OFFSET, sh.ORIGINAL_TIMESTAMP)
    same += (sh.ORIGINAL_TIMESTAMP_TYPE, sh.ORIGINAL_TIMESTAMP_RETRY, sh.ATTEMPTS)
    for name in same:
        assert last(spring.headers, name) == last(python.headers, name), name
    stamp = run.original.timestamp[1]
    assert last(python.headers, sh.ORIGINAL_TIMESTAMP) == stamp.to_bytes(8, "big")
    assert last(python.headers, sh.ORIGINAL_TIMESTAMP_RETRY) == sh.encode_big_integer(stamp)
    assert last(python.headers, sh.ORIGINAL_TIMESTAMP_TYPE) == b"CreateTime"


def test_dead_letters_of_one_failure_carry_the_same_header_names_in_the_same_order(
    run: Run,
) -> None:
    assert names(run.dead["d"].headers) == names(run.dead["c"].headers)


def test_retry_records_of_one_failure_carry_the_same_header_names_in_the_same_order(
    run: Run,
) -> None:
    """Hop by hop: what Spring's listener read from kheaders' retry topics (d never reaches
    Spring, but a's first hop is kheaders', b's second Spring's ...) against Spring's own."""
    [python_first] = run.spring_on(run.topics["a"] + "-retry-1000")  # written by kheaders
    [spring_first] = run.spring_on(run.topics["c"] + "-retry-1000")  # written by Spring
    assert names(decoded(python_first["headers"])) == names(decoded(spring_first["headers"]))
    [python_second] = run.python_on(run.topics["d"] + "-retry-2000")  # kheaders, twice
    [spring_second] = run.spring_on(run.topics["c"] + "-retry-2000")
    assert names(python_second.headers) == names(decoded(spring_second["headers"]))


def test_spring_appends_a_retry_set_per_hop_and_writes_the_failure_before_the_origin(
    run: Run,
) -> None:
    """What Spring 4.1 writes, pinned: the shape kheaders is to follow."""
    [first] = run.spring_on(run.topics["c"] + "-retry-2000")
    hop = names(decoded(first["headers"]))[len(OWN) :]
    assert hop == [*ORIGIN, *RETRY, *FAILURE, *RETRY]
    [first_hop] = run.spring_on(run.topics["c"] + "-retry-1000")
    assert names(decoded(first_hop["headers"]))[len(OWN) :] == [*FAILURE, *ORIGIN, *RETRY]
    dead = names(run.dead["c"].headers)[len(OWN) :]
    assert dead == [*ORIGIN, *RETRY, *RETRY, *FAILURE, *RETRY]
    assert [sh.decode_attempts(v) for k, v in run.dead["c"].headers if k == sh.ATTEMPTS] == [
        2,
        3,
        4,
    ]


def test_spring_stamps_its_retry_and_dead_letter_records_when_sent(run: Run) -> None:
    stamp = run.original.timestamp[1]
    assert run.dead["c"].timestamp[1] > stamp + DAY_MS // 2
    for hop in ("-retry-1000", "-retry-2000"):
        [got] = run.spring_on(run.topics["c"] + hop)
        assert got["timestamp"] > stamp + DAY_MS // 2


def test_kheaders_stamps_its_retry_and_dead_letter_records_when_sent(run: Run) -> None:
    stamp = run.original.timestamp[1]
    assert run.dead["d"].timestamp[1] > stamp + DAY_MS // 2
    [retry] = run.spring_on(run.topics["a"] + "-retry-1000")  # kheaders wrote it, Spring read it
    assert retry["timestamp"] > stamp + DAY_MS // 2


# -- the command line on what Spring wrote ---------------------------------------------------


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(list(args))
    return code, out.getvalue()


def test_kheaders_tail_decodes_the_retry_state_spring_wrote(run: Run, bootstrap: str) -> None:
    c = run.topics["c"]
    code, text = _cli(
        "tail", c + "-dlt", "--bootstrap", bootstrap, "--from-beginning", "--max", "1",
        "--timeout", "10",
    )  # fmt: skip
    assert code == 0
    # the attempts header's last value (4, of Spring's three sets) says three were made
    assert "dead letter: failed after attempt 3; no further attempt" in text
    assert f"original: {c}[0]@0 " in text
    assert f"(group {run.spring_group})" in text
    assert "failed: org.springframework.kafka.listener.ListenerExecutionFailedException" in text
    assert "kafka_original-timestamp-type: CreateTime" in text


@pytest.fixture(scope="module")
def replayed(run: Run, bootstrap: str) -> Read:
    """Spring's dead letter of c, replayed by ``kheaders dlt replay`` to c."""
    c = run.topics["c"]
    code, _ = _cli("dlt", "replay", c + "-dlt", "--bootstrap", bootstrap, "--timeout", "3")
    assert code == 0
    _, again = read_all(bootstrap, c, 2)
    return again


def test_kheaders_dlt_replay_sends_a_spring_dead_letter_back_to_start_over(
    replayed: Read,
) -> None:
    assert (replayed.key, replayed.value, replayed.partition) == (KEY, VALUE, 0)
    assert replayed.headers == OWN  # no retry, origin or failure header left


def test_kheaders_dlt_replay_restores_the_original_timestamp_of_a_spring_dead_letter(
    run: Run, replayed: Read
) -> None:
    assert replayed.timestamp == run.original.timestamp
