"""Writing a latest state to a (compacted) topic, and comparing a topic with a state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.cimpl import NewTopic

from kheaders._client.admin import admin_client
from kheaders._errors import BrokerUnavailableError, KHeadersError
from kheaders._log import get_logger
from kheaders._model.headers import Headers
from kheaders._model.limits import check_sendable
from kheaders._model.received import message_headers
from kheaders.compaction._latest import ConsumedMessage, Key, StateEntry
from kheaders.compaction._latest_state import LatestState, StateConsumer

_log = get_logger("kheaders.compaction")

StateLike = Mapping[Key, StateEntry] | Mapping[Key, ConsumedMessage]
"""A :class:`LatestState`, a ``{key: StateEntry}`` or :func:`latest`'s ``{key: Message}``."""


class StateProducer(Protocol):
    """What write_state needs: confluent-kafka's ``produce``/``poll``/``flush``."""

    def produce(self, topic: str, *args: object, **kwargs: object) -> None: ...
    def poll(self, timeout: float = ...) -> int: ...
    def flush(self, timeout: float = ...) -> int: ...


def _fields(
    item: StateEntry | ConsumedMessage,
) -> tuple[object, object, list[tuple[str, bytes | None]], int]:
    """``(key, value, headers as pairs, timestamp)`` of a state entry or a consumed message."""
    key: object
    if isinstance(item, StateEntry):
        key, value, headers, ts = item.key, item.value, item.headers, item.timestamp
    else:
        key, value, headers = item.key(), item.value(), message_headers(item)
        ts_type, ts = item.timestamp()
        ts = ts if ts_type else -1
    if headers is None:
        pairs: list[tuple[str, bytes | None]] = []
    elif isinstance(headers, Headers):
        pairs = headers.to_list()
    else:
        pairs = [(k, v) for k, v in headers]
    return key, value, pairs, ts


def create_compacted_topic(
    bootstrap: str, topic: str, *, partitions: int = 1, replication: int = 1, timeout: float = 30.0
) -> bool:
    """Create ``topic`` with ``cleanup.policy=compact``; return whether the policy was set.

    An existing topic is left as it is (returns False).  A broker that rejects the config is
    asked again without it (logged; returns False).  Raises BrokerUnavailableError when the
    topic can be created neither way.
    """
    with admin_client({"bootstrap.servers": bootstrap}) as admin:
        for config in ({"cleanup.policy": "compact"}, {}):
            new = NewTopic(
                topic, num_partitions=partitions, replication_factor=replication, config=config
            )
            future = admin.create_topics([new], operation_timeout=timeout, request_timeout=timeout)[
                topic
            ]
            try:
                future.result(timeout)
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                code = err.code() if isinstance(err, KafkaError) else None
                if code == KafkaError.TOPIC_ALREADY_EXISTS:
                    _log.info("compaction.state_topic_exists", topic=topic)
                    return False
                if config:
                    _log.warning(
                        "compaction.compact_policy_rejected",
                        topic=topic,
                        error=str(exc),
                        detail="creating the topic without cleanup.policy=compact",
                    )
                    continue
                raise BrokerUnavailableError(f"could not create topic {topic!r}: {exc}") from exc
            return bool(config)
    return False


def write_state(
    state: StateLike,
    producer: StateProducer,
    topic: str,
    *,
    create_topic_on: str | None = None,
    partitions: int = 1,
    keep_timestamps: bool = True,
    flush_timeout: float = 30.0,
) -> int:
    """Produce every winning record of ``state`` to ``topic`` with its original key, value
    and headers (and timestamp, unless ``keep_timestamps=False``); return the count.

    ``create_topic_on`` (bootstrap servers) creates ``topic`` first with
    ``cleanup.policy=compact`` where the broker supports it.  Tombstones in ``state`` are not
    written (a state holds none).  Raises KHeadersError naming the first key whose delivery
    failed, or when not every record was delivered within ``flush_timeout``;
    InvalidNameError, before producing it, for a record whose header key librdkafka cannot
    take (NUL, not UTF-8).
    """
    if create_topic_on is not None:
        create_compacted_topic(create_topic_on, topic, partitions=partitions)
    failures: list[tuple[object, str]] = []
    delivered = 0

    def on_delivery(err: KafkaError | None, msg: ConsumedMessage) -> None:
        nonlocal delivered
        if err is None:
            delivered += 1
        else:
            failures.append((msg.key(), str(err)))

    count = 0
    for item in state.values():
        key, value, headers, ts = _fields(item)
        if value is None:
            continue
        check_sendable(headers, None)  # any producer may write it: the key rule first
        kwargs: dict[str, object] = {"key": key, "value": value, "on_delivery": on_delivery}
        if headers:
            kwargs["headers"] = headers
        if keep_timestamps and ts > 0:
            kwargs["timestamp"] = ts
        producer.produce(topic, **kwargs)
        producer.poll(0)
        count += 1
    left = producer.flush(flush_timeout)
    if failures:
        key, error = failures[0]
        _log.error("compaction.write_state_failed", topic=topic, failed=len(failures))
        raise KHeadersError(
            f"{len(failures)} of {count} state records were not delivered to {topic!r};"
            f" first key {key!r}: {error}"
        )
    if left or delivered != count:
        raise KHeadersError(
            f"only {delivered} of {count} state records were delivered to {topic!r}"
            f" within {flush_timeout} s"
        )
    return count


def diff_state(left: StateLike, right: StateLike) -> set[Key]:
    """Keys whose latest records differ in value or headers, or that only one side has.

    >>> from kheaders.compaction import StateEntry
    >>> a = {b"k": StateEntry(b"k", b"1", None, None, 0, 0, 0)}
    >>> diff_state(a, {b"k": StateEntry(b"k", b"2", None, None, 0, 0, 5)})
    {b'k'}
    >>> diff_state(a, {b"k": StateEntry(b"k", b"1", [], None, 9, 3, 7)})
    set()
    """
    differing: set[Key] = set(left.keys()) ^ set(right.keys())
    for key in set(left.keys()) & set(right.keys()):
        _, lv, lh, _ = _fields(left[key])
        _, rv, rh, _ = _fields(right[key])
        if lv != rv or lh != rh:
            differing.add(key)
    return differing


def check_topic(
    topic: str,
    expected: StateLike,
    *,
    consumer: StateConsumer | None = None,
    bootstrap: str | None = None,
    strategy: str | None = "offset",
    header: str | None = None,
    encoding: str = "long",
    timeout: float = 60.0,
) -> set[Key]:
    """Read ``topic``'s latest state (through ``consumer``, or a consumer on ``bootstrap``)
    and return the keys in which it differs from ``expected`` (empty: they agree).

    Raises KHeadersError when the topic cannot be read to its end within ``timeout``,
    ConfigurationError when neither ``consumer`` nor ``bootstrap`` is given.
    """
    config = None if bootstrap is None else {"bootstrap.servers": bootstrap}
    state = LatestState(
        topic, consumer, config=config, strategy=strategy, header=header, encoding=encoding
    )
    try:
        if not state.run_until_caught_up(timeout):
            raise KHeadersError(f"could not read topic {topic!r} to its end within {timeout} s")
        return diff_state(state, expected)
    finally:
        state.close()
