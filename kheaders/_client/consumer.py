"""A header-aware consumer around ``confluent_kafka.Consumer``, with interceptors and deserializers.

Every record returned has ``msg.headers()`` as a read-only :class:`Headers` (empty, never
``None``), wrapped over librdkafka's own list without touching each header, and ``key()`` /
``value()`` deserialized with the topic and headers. Error events (``msg.error()`` set) pass
through untouched. A record a deserializer ran on keeps the key and value bytes consumed
(:func:`~kheaders._client.consumed.consumed_bytes`, read by the dead-letter publisher): they
are kept beside its Headers, so such a record always gets its own Headers object, and
replacing them with ``set_headers`` drops them.

A deserializer failure never loses a record nor stops the consumer:

* ``poll()`` raises :class:`DeserializationError` for that record (the consumer has already
  moved past it); the next ``poll()`` returns the next record.
* ``consume()`` returns the batch's good records and keeps the failures; the next ``poll()``
  or ``consume()`` raises them, one per call and in order, before fetching more. When no
  record of a batch was good, the first failure is raised at once. Failures still kept when
  the consumer closes are raised by ``close()`` (HeldFailuresError, an ExceptionGroup of
  them), so none is lost in a clean shutdown.

With ``enable.auto.commit`` (librdkafka's default), offsets are committed for every record
librdkafka handed over, a kept failure included, as for a failure ``poll()`` raised: the
failure reaches the application (by the next call or by ``close()``), but a process that dies
between the two loses it, as it loses the batch's unprocessed records. For at-least-once,
turn auto-commit off and commit after handling each record or failure.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, Message, TopicPartition

from kheaders._client.chain import InterceptorChain
from kheaders._client.clientlog import LibrdkafkaLog, client_log, route_client_log
from kheaders._client.config import resolve
from kheaders._client.consumed import keep_consumed
from kheaders._client.deserializing import deserialize
from kheaders._client.wrapping import ClientWrapper, client_config, refuse_async
from kheaders._errors import DeserializationError, held_failures
from kheaders._model.headers import received, received_all
from kheaders._model.keys import check_name
from kheaders._model.received import (
    HEADER_FAILURES,
    call_headers,
    headers_of_all,
    unreadable_headers,
)

CommitCallback = Callable[["KafkaError | None", list[TopicPartition]], object]
"""librdkafka's ``on_commit`` config callback: ``(err, partitions)``."""

_EMPTY = received([])
_set_headers: Callable[[Message, object], None] = Message.set_headers  # type: ignore[assignment]


def _commit_callback(chain: InterceptorChain, user: CommitCallback | None) -> CommitCallback:
    """Our ``on_commit`` config callback: interceptors (successes only), then the user's."""

    def on_commit(err: KafkaError | None, partitions: list[TopicPartition]) -> None:
        if err is None:
            done = [tp for tp in partitions if tp.error is None]
            if done:
                chain.commit(done)
        if user is not None:
            user(err, partitions)

    return on_commit


def _unreadable_headers(msg: Message, exc: BaseException) -> DeserializationError:
    """The model's error for unreadable headers; the record keeps empty read-only Headers."""
    return unreadable_headers(msg, exc, _EMPTY)


RebalanceCallback = Callable[[Any, list[TopicPartition]], object]
"""confluent-kafka's ``on_assign``/``on_revoke``/``on_lost``: ``(consumer, partitions)``."""


def _rebalance(
    consumer: Consumer, callback: RebalanceCallback, _raw: object, partitions: list[TopicPartition]
) -> None:
    callback(consumer, partitions)


class Consumer(ClientWrapper, client=confluent_kafka.Consumer):
    """A ``confluent_kafka.Consumer`` returning records with :class:`Headers` and decoded data.

    Built as confluent's is: ``Consumer(config)``, ``Consumer(**config)`` or both (keywords
    win), ``logger=`` included. ``config`` is librdkafka's config plus kheaders' keys
    (``interceptor.classes``, ``key.deserializer``, ``value.deserializer``), removed before
    librdkafka sees it. When an
    interceptor implements ``on_commit``, kheaders installs its own ``on_commit`` callback
    (calling the interceptors, then the config's ``on_commit``, if any), so async and
    automatic commits reach the interceptors too.

    Raises TypeError('expected configuration dict') without a config (as confluent-kafka),
    ConfigurationError for a bad kheaders setting (naming it), TypeError for an object that
    implements no consumer hook, and KafkaException for a setting librdkafka rejects.
    """

    _closed_message = "Consumer closed"
    __slots__ = (
        "_chain",
        "_closed",
        "_consumer",
        "_consumer_log",
        "_extra",
        "_group",
        "_key_de",
        "_pending",
        "_value_de",
    )

    _consumer_log: LibrdkafkaLog | None
    """Where librdkafka's lines go (:mod:`kheaders._client.clientlog`): flushed at close."""

    def __init__(
        self,
        config: Mapping[str, object] | None = None,
        /,
        *,
        interceptors: Iterable[object] = (),
        key_deserializer: object = None,
        value_deserializer: object = None,
        strict: bool = False,
        logger: object = None,
        **kwargs: object,
    ) -> None:
        config = client_config(config, kwargs, logger)
        setup = resolve(
            config,
            interceptors=interceptors,
            key=key_deserializer,
            value=value_deserializer,
            producer=False,
            strict=strict,
        )
        chain = setup.chain
        rdkafka = route_client_log(setup.rdkafka, watch_brokers=True)
        if chain.on_commit:
            user = rdkafka.get("on_commit")
            rdkafka["on_commit"] = _commit_callback(chain, user)  # type: ignore[arg-type]
        try:
            raw = confluent_kafka.Consumer(rdkafka)
        except BaseException:
            chain.close()
            raise
        group = config.get("group.id")
        self._setup(raw, chain, setup.key, setup.value, group if isinstance(group, str) else None)
        self._consumer_log = client_log(rdkafka)

    def _setup(
        self,
        raw: confluent_kafka.Consumer,
        chain: InterceptorChain,
        key_de: Callable[..., object] | None,
        value_de: Callable[..., object] | None,
        group: str | None,
    ) -> None:
        self._consumer = raw
        self._chain = chain
        self._consumer_log = None
        self._key_de = key_de
        self._value_de = value_de
        self._group = group
        self._pending: deque[DeserializationError] = deque()
        self._extra: deque[Message] = deque()  # records an on_consume added to a poll()
        self._closed = False

    @classmethod
    def _wrap(
        cls,
        raw: confluent_kafka.Consumer,
        chain: InterceptorChain,
        key_de: Callable[..., object] | None,
        value_de: Callable[..., object] | None,
        group: str | None,
    ) -> Consumer:
        self = cls.__new__(cls)
        self._setup(raw, chain, key_de, value_de, group)
        return self

    # -- reading ----------------------------------------------------------------------------

    def _prepare(self, msg: Message) -> None:
        """Wrap the headers read-only; deserialize key and value (both, or neither, applied).

        Raises DeserializationError carrying the untouched record.
        """
        try:
            raw_headers = call_headers(msg)
        except HEADER_FAILURES as exc:
            raise _unreadable_headers(msg, exc) from exc
        kd = self._key_de
        vd = self._value_de
        if kd is None and vd is None:
            # librdkafka gives a list of (str, bytes | None): already valid, wrapped as it is
            msg.set_headers(received(raw_headers) if raw_headers else _EMPTY)
            return
        # the consumed bytes are kept beside the record's own new Headers (the one object of
        # ours a Message holds): dead letters republish them (consumed_bytes)
        headers = received(raw_headers or ())
        keep_consumed(headers, msg.key(), msg.value())
        msg.set_headers(headers)
        deserialize(msg, headers, kd, vd)

    def poll(self, timeout: float = -1) -> Message | None:
        """The next record or event, or ``None`` on timeout (or when interceptors dropped it).

        Raises DeserializationError for a record that failed to deserialize (or one kept from
        a previous ``consume()``); the consumer has moved past it.
        """
        if self._pending:
            raise self._pending.popleft()
        if self._extra:
            return self._extra.popleft()
        msg = self._consumer.poll(timeout)
        if msg is None or msg.error() is not None:
            return msg
        self._prepare(msg)
        if self._chain.on_consume:
            out = self._chain.consume([msg])
            if not out:
                return None
            self._extra.extend(out[1:])  # never dropped: the next calls return them
            return out[0]
        return msg

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Message]:
        """Up to ``num_messages`` records and events; the good records of a batch are returned.

        Raises DeserializationError: one kept from an earlier batch (before fetching), or the
        first failure of a batch in which no record deserialized (the rest are kept).
        """
        if self._pending:
            raise self._pending.popleft()
        if self._extra:
            take = min(max(num_messages, 1), len(self._extra))
            return [self._extra.popleft() for _ in range(take)]
        msgs = self._consumer.consume(num_messages, timeout)
        if not msgs:
            return msgs
        if self._key_de is None and self._value_de is None:
            out, events = self._with_headers(msgs)
        else:
            out, events = self._prepare_batch(msgs)
        if self._chain.on_consume and out:
            out = self._intercept(out, events)
        if not out and self._pending:
            raise self._pending.popleft()
        return out

    def _with_headers(self, msgs: list[Message]) -> tuple[list[Message], bool]:
        """The common case, kept lean: each record of a batch gets its read-only Headers.

        Records whose headers are unreadable are taken out of the batch, their failures kept
        in ``_pending``. Returns the rest (records and events, in order) and whether any is
        an error event.
        """
        lists, failed = headers_of_all(msgs, _EMPTY)
        headers, missing = received_all(lists)
        if not missing and type(msgs[0]) is Message:
            # every message has headers, so none is an error event (librdkafka's have none)
            try:
                deque(map(_set_headers, msgs, headers), 0)  # one C-level loop
            except TypeError:  # an object other than a confluent Message: one by one below
                pass
            else:
                return msgs, False
        events = False
        for msg, h in zip(msgs, headers, strict=True):
            if h is not None:
                msg.set_headers(h)
            elif msg.error() is None:
                msg.set_headers(_EMPTY)
            else:
                events = True
        if not failed:
            return msgs, events
        for _, failure in failed:
            self._pending.append(failure)
        bad = {i for i, _ in failed}
        return [m for i, m in enumerate(msgs) if i not in bad], events

    def _prepare_batch(self, msgs: list[Message]) -> tuple[list[Message], bool]:
        """Prepare each record; keep failures in ``_pending``; return the rest (in order)."""
        prepare = self._prepare
        out: list[Message] = []
        events = False
        for msg in msgs:
            if msg.error() is not None:
                events = True
            else:
                try:
                    prepare(msg)
                except DeserializationError as exc:
                    self._pending.append(exc)
                    continue
            out.append(msg)
        return out, events

    def _intercept(self, out: list[Message], events: bool) -> list[Message]:
        """on_consume over the batch's records; error events follow them, untouched."""
        if not events:
            return self._chain.consume(out)
        records = [m for m in out if m.error() is None]
        tail = [m for m in out if m.error() is not None]
        return (self._chain.consume(records) if records else []) + tail

    # -- offsets ----------------------------------------------------------------------------

    def commit(self, *args: Any, **kwargs: Any) -> list[TopicPartition] | None:
        """Commit as confluent-kafka does (``message=``, ``offsets=``, ``asynchronous=``).

        A synchronous commit's result reaches the interceptors' ``on_commit`` here; an
        asynchronous one through the ``on_commit`` callback (consumers built by kheaders only).
        Raises KafkaException when a synchronous commit fails.
        """
        result: list[TopicPartition] | None = self._consumer.commit(*args, **kwargs)
        if result is not None and self._chain.on_commit:
            done = [tp for tp in result if tp.error is None]
            if done:
                self._chain.commit(done)
        return result

    def store_offsets(self, *args: Any, **kwargs: Any) -> None:
        """Store offsets for the next (auto) commit, as confluent-kafka does."""
        self._consumer.store_offsets(*args, **kwargs)

    def subscribe(
        self,
        topics: list[str],
        on_assign: RebalanceCallback | None = None,
        on_revoke: RebalanceCallback | None = None,
        on_lost: RebalanceCallback | None = None,
    ) -> None:
        """Subscribe to ``topics``; ``on_assign(consumer, partitions)`` and the other
        rebalance callbacks get this consumer, as confluent-kafka passes the one in hand.

        Raises InvalidNameError for a topic holding NUL (librdkafka would subscribe to the
        text before it) or not encodable as UTF-8 (it would crash).
        """
        given = {"on_assign": on_assign, "on_revoke": on_revoke, "on_lost": on_lost}
        callbacks = {name: partial(_rebalance, self, cb) for name, cb in given.items() if cb}
        self._consumer.subscribe([check_name(t) for t in topics], **callbacks)

    def assign(self, partitions: list[TopicPartition]) -> None:
        """Assign partitions directly (no group join)."""
        self._consumer.assign(partitions)

    # -- the rest ---------------------------------------------------------------------------

    @property
    def interceptors(self) -> InterceptorChain:
        """The interceptor chain (``.errors`` counts failures per interceptor)."""
        return self._chain

    @property
    def wrapped(self) -> confluent_kafka.Consumer:
        """The underlying ``confluent_kafka.Consumer``."""
        return self._consumer

    @property
    def group_id(self) -> str | None:
        """The consumer group (``group.id``) when known."""
        return self._group

    def close(self) -> None:
        """Close the consumer (leaving its group), then the interceptors; twice is a no-op.

        Raises HeldFailuresError (an ExceptionGroup of DeserializationError, each carrying its
        raw record) once closed, when failures kept from the last ``consume()`` were never
        raised: they are surfaced, never dropped (see the module doc for auto-commit).
        """
        self._close()

    def _close(self) -> None:
        """The closing rule of both consumers (a :class:`ShareConsumer` runs it too): once;
        the failures kept are taken first; librdkafka's client closed, then its log flushed
        and the interceptors closed even when that failed; the kept failures raised last."""
        if self._closed:
            return
        self._closed = True
        held = list(self._pending)
        self._pending.clear()
        try:
            self._consumer.close()
        finally:
            if self._consumer_log is not None:
                self._consumer_log.flush()
            self._chain.close()
        if held:
            raise held_failures(held)

    def __repr__(self) -> str:
        n = len(self._chain.interceptors)
        return f"<kheaders.Consumer wrapping {self._consumer!r}, {n} interceptors>"


def consumer_log(consumer: Consumer) -> LibrdkafkaLog | None:
    """Where ``consumer``'s librdkafka lines go (``None``: a logger of the caller's, or a
    wrapped client kheaders did not build)."""
    return consumer._consumer_log


def kept_back(consumer: Consumer) -> int:
    """How many failures ``consumer``'s last batch kept back (each raised by a later read,
    in order); kheaders.aio's interface, with :func:`deserializers_of`."""
    return len(consumer._pending)


def deserializers_of(consumer: Consumer) -> tuple[Callable[..., object] | None, ...]:
    """The key and value deserializers ``consumer`` calls (``None`` for none)."""
    return consumer._key_de, consumer._value_de


def wrap_consumer(
    consumer: confluent_kafka.Consumer,
    *,
    interceptors: Iterable[object] = (),
    key_deserializer: object = None,
    value_deserializer: object = None,
    strict: bool = False,
    group_id: str | None = None,
    config: Mapping[str, object] | None = None,
) -> Consumer:
    """Wrap an existing ``confluent_kafka.Consumer`` (or a subclass, e.g. confluent's
    ``DeserializingConsumer``), which the wrapper then owns: ``close()`` and ``with`` close it.

    ``config`` is for what the wrapped consumer cannot tell: the settings it was built with
    that interceptors read (``group.id``, ``client.id``, ``bootstrap.servers`` for tracing and
    metrics attributes) and kheaders' own keys (``interceptor.classes``,
    ``value.deserializer``, ``kheaders.*``), resolved exactly as :class:`Consumer` resolves its
    config; librdkafka never sees it. ``group_id`` defaults to its ``group.id``.
    Its config cannot be changed any more, so interceptors' ``on_commit`` sees synchronous
    commits only (build a :class:`Consumer` to also see async and automatic commits).

    Raises TypeError for an asyncio client (use ``kheaders.aio``) or an interceptor that
    implements no consumer hook, ConfigurationError for a bad setting or a deserializer
    without ``deserialize``.
    """
    refuse_async(consumer, "wrap_consumer")
    config = config or {}
    setup = resolve(
        config,
        interceptors=interceptors,
        key=key_deserializer,
        value=value_deserializer,
        producer=False,
        strict=strict,
    )
    chain = setup.chain
    if group_id is None:
        group = config.get("group.id")
        group_id = group if isinstance(group, str) else None
    return Consumer._wrap(consumer, chain, setup.key, setup.value, group_id)
