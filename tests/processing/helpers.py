"""Helpers of the processing tests: produce, read a topic whole, run a processor aside."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import confluent_kafka
from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from kheaders.broker import fast_consumer_config
from kheaders.processing import AIOProcessor, Processor

ALL = ("sync", "async", "async-4")
"""Every processing driver, as ``make`` names them (the ``driver`` fixture runs the first two)."""


@dataclass
class Read:
    """One record as read back raw: everything the wire carries."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]
    timestamp: tuple[int, int]

    def last(self, name: str) -> bytes | None:
        """The last value of header ``name`` (None when absent)."""
        found = [v for k, v in self.headers if k == name]
        return found[-1] if found else None


def produce(bootstrap: str, topic: str, records: list[dict[str, Any]]) -> list[Read]:
    """Produce raw records (keys: key, value, headers, partition); return them as delivered."""
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    out: list[Read] = []

    def report(err: object, msg: Any) -> None:
        assert err is None, err
        out.append(
            Read(
                msg.topic(),
                msg.partition(),
                msg.offset(),
                msg.key(),
                msg.value(),
                list(msg.headers() or []),  # None in reports (confluent #574): refilled below
                msg.timestamp(),
            )
        )

    for r in records:
        kwargs: dict[str, Any] = {
            "key": r.get("key"),
            "value": r.get("value"),
            "on_delivery": report,
        }
        if r.get("headers") is not None:
            kwargs["headers"] = r["headers"]
        if r.get("partition") is not None:
            kwargs["partition"] = r["partition"]
        producer.produce(topic, **kwargs)
        producer.poll(0)
    assert producer.flush(30) == 0
    by_key = {(r.get("key"), r.get("value")): r for r in records}
    for read in out:
        read.headers = list(by_key[(read.key, read.value)].get("headers") or [])
    return out


def read_all(bootstrap: str, topic: str, expected: int, timeout: float = 60.0) -> list[Read]:
    """Every record of ``topic`` once ``expected`` are there (all partitions, by assign)."""
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
        }
    )
    try:
        deadline = time.monotonic() + timeout
        while True:  # the processor may not have created the topic yet
            meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
            if meta is not None and meta.error is None and meta.partitions:
                break
            assert time.monotonic() < deadline, f"topic {topic} never appeared"
            time.sleep(0.1)
        consumer.assign(
            [TopicPartition(topic, p, OFFSET_BEGINNING) for p in sorted(meta.partitions)]
        )
        out: list[Read] = []
        while len(out) < expected and time.monotonic() < deadline:
            for m in consumer.consume(500, 0.2):
                if m.error() is None:
                    out.append(
                        Read(
                            m.topic(),
                            m.partition(),
                            m.offset(),
                            m.key(),
                            m.value(),
                            list(m.headers() or []),
                            m.timestamp(),
                        )
                    )
        return out
    finally:
        consumer.close()


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0, what: str = "") -> None:
    """Poll ``predicate`` until true; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what or predicate}"
        time.sleep(0.05)


def config(bootstrap: str, group: str | None = None, **extra: Any) -> dict[str, Any]:
    """A processor config: fast group joins on the embedded broker (Tansu's join takes about
    half the session timeout: 3.5 s at fast_consumer_config's 6 s, 2.5 s at 3 s)."""
    settings = {"session.timeout.ms": 3000, "heartbeat.interval.ms": 300, **extra}
    return fast_consumer_config(bootstrap, group or f"proc-{uuid.uuid4().hex[:8]}", **settings)


class Running:
    """A processor (sync, or async on its own loop) running in a thread; ``stop()`` joins
    it and re-raises what ``run()`` raised."""

    def __init__(self, processor: Processor | AIOProcessor) -> None:
        self.processor = processor
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            if isinstance(self.processor, AIOProcessor):
                asyncio.run(self.processor.run())
            else:
                self.processor.run()
        except BaseException as exc:
            self.error = exc

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 60.0) -> None:
        self.processor.stop()
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the processor did not stop"
        if self.error is not None:
            raise self.error


def make(kind: str, *args: Any, **kwargs: Any) -> Processor | AIOProcessor:
    """A sync Processor (``kind`` "sync") or an AIOProcessor over an async wrapper of the
    same handler (``kind`` "async" or "async-N" for concurrency N)."""
    if kind == "sync":
        return Processor(*args, **kwargs)
    concurrency = int(kind.split("-")[1]) if "-" in kind else 1

    def lift(fn: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(fn):
            return fn  # already async (the test wrote an asyncio handler for this driver)

        async def handler(msg: Any) -> Any:
            return fn(msg)

        return handler

    if len(args) > 2 and args[2] is not None:
        args = (*args[:2], lift(args[2]), *args[3:])
    if kwargs.get("handlers"):
        kwargs["handlers"] = {k: lift(v) for k, v in kwargs["handlers"].items()}
    return AIOProcessor(*args, concurrency=concurrency, **kwargs)
