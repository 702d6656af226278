"""A header-aware share-group consumer (KIP-932) around ``confluent_kafka.ShareConsumer``.

A share group hands each record to one member at a time: the member *acquires* it under a
lock kept by the broker (``share.record.lock.duration.ms`` of the group, 30 s by default) and
acknowledges it as accepted, released (delivered again, to any member) or rejected (never
delivered again). The broker counts deliveries: ``msg.delivery_count()`` is 1 the first time
a record is acquired and grows by one each time it is acquired again after a release or an
expired lock (confluent-kafka's own ``Message.delivery_count()``, kept as it is).

Records come back as the :class:`Consumer` returns them: ``msg.headers()`` a read-only
:class:`Headers` (empty, never ``None``), ``key()``/``value()`` deserialized by the same rule,
the consumer interceptors' ``on_consume`` run over each batch. A record whose deserializer
failed is kept as ``consume()`` keeps one: the batch's good records are returned and each
failure is raised (a DeserializationError carrying the record, its delivery count included)
by a later ``poll()``, before more is fetched, or at once when no record of the batch was
good. In ``explicit`` acknowledgement mode such a record still has to be acknowledged
(``acknowledge(exc.message, ...)``) before the next fetch, as every record of a batch has.

In explicit mode a record an ``on_consume`` interceptor leaves out of a batch is accepted:
it was consumed and meant to be skipped, as a classic consumer's commit passes it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping

import confluent_kafka
from confluent_kafka import AcknowledgeType, KafkaException, Message, Messages, TopicPartition

from kheaders._client.chain import InterceptorChain
from kheaders._client.clientlog import LibrdkafkaLog, client_log, route_client_log
from kheaders._client.config import resolve
from kheaders._client.consumer import Consumer
from kheaders._client.wrapping import ClientWrapper, client_config, refuse_async
from kheaders._errors import ConfigurationError, DeserializationError
from kheaders._model.keys import check_name

ACKNOWLEDGEMENT_MODE = "share.acknowledgement.mode"
IMPLICIT = "implicit"
EXPLICIT = "explicit"

AcknowledgementCallback = Callable[
    [dict[TopicPartition, set[int]], "KafkaException | None"], object
]
"""confluent-kafka's acknowledgement commit callback: ``(offsets, exception)``."""


def acknowledged(offsets: Mapping[TopicPartition, Iterable[int]]) -> list[TopicPartition]:
    """One ``TopicPartition`` per acknowledged record, in partition then offset order: what
    interceptors' ``on_commit(offsets)`` receives from a share consumer.

    >>> [(tp.topic, tp.partition, tp.offset)
    ...  for tp in acknowledged({TopicPartition("t", 0): {4, 2}})]
    [('t', 0, 2), ('t', 0, 4)]
    """
    out: list[TopicPartition] = []
    for tp in sorted(offsets, key=lambda tp: (tp.topic, tp.partition)):
        out.extend(TopicPartition(tp.topic, tp.partition, o) for o in sorted(offsets[tp]))
    return out


def acknowledgement_mode(config: Mapping[str, object]) -> str:
    """``implicit`` or ``explicit`` (``share.acknowledgement.mode``, implicit by default).

    Raises ConfigurationError naming the setting for any other value.
    """
    mode = config.get(ACKNOWLEDGEMENT_MODE, IMPLICIT)
    if mode not in (IMPLICIT, EXPLICIT):
        raise ConfigurationError(
            f"{ACKNOWLEDGEMENT_MODE}: expected 'implicit' or 'explicit', got {mode!r}"
        )
    return str(mode)


class ShareConsumer(ClientWrapper, client=confluent_kafka.ShareConsumer):
    """A ``confluent_kafka.ShareConsumer`` returning records with :class:`Headers`, decoded
    data and the broker's delivery count.

    Built as :class:`Consumer` is: ``ShareConsumer(config)``, ``ShareConsumer(**config)`` or
    both (keywords win), with kheaders' keys (``interceptor.classes``, ``key.deserializer``,
    ``value.deserializer``) taken out before librdkafka sees the config. ``acknowledge``,
    ``acknowledge_offset``, ``commit_sync``, ``commit_async`` and the rest are confluent's.
    Interceptors' ``on_commit`` gets one ``TopicPartition`` per record the broker confirmed
    acknowledged (whichever call carried the acknowledgement: ``poll``, a commit, ``close``).

    Raises TypeError('expected configuration dict') without a config, ConfigurationError for
    a bad kheaders setting or acknowledgement mode, TypeError for an object that implements
    no consumer hook, and KafkaException for a setting librdkafka rejects.
    """

    _closed_message = "Share consumer closed"
    _consumer_log: LibrdkafkaLog | None
    """Where librdkafka's lines go (:mod:`kheaders._client.clientlog`): flushed at close."""
    __slots__ = (
        "_chain",
        "_closed",
        "_consumer",
        "_consumer_log",
        "_explicit",
        "_group",
        "_key_de",
        "_on_acknowledged",
        "_pending",
        "_value_de",
    )

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
        mode = acknowledgement_mode(config)
        setup = resolve(
            config,
            interceptors=interceptors,
            key=key_deserializer,
            value=value_deserializer,
            producer=False,
            strict=strict,
        )
        rdkafka = route_client_log(setup.rdkafka, watch_brokers=True)
        try:
            raw = confluent_kafka.ShareConsumer(rdkafka)
        except BaseException:
            setup.chain.close()
            raise
        group = config.get("group.id")
        self._setup(raw, setup.chain, setup.key, setup.value, group, mode == EXPLICIT)
        self._consumer_log = client_log(rdkafka)

    def _setup(  # noqa: PLR0917 - the parts of a share consumer, in order
        self,
        raw: confluent_kafka.ShareConsumer,
        chain: InterceptorChain,
        key_de: Callable[..., object] | None,
        value_de: Callable[..., object] | None,
        group: object,
        explicit: bool,
    ) -> None:
        self._consumer = raw
        self._chain = chain
        self._consumer_log = None
        self._key_de = key_de
        self._value_de = value_de
        self._group = group if isinstance(group, str) else None
        self._explicit = explicit
        self._pending: deque[DeserializationError] = deque()
        self._on_acknowledged: AcknowledgementCallback | None = None
        self._closed = False
        if chain.on_commit:
            raw.set_acknowledgement_commit_callback(self._acknowledged)

    # -- reading ----------------------------------------------------------------------------

    # The Consumer's record rules, run on a share consumer's batches: they read and write
    # only ``_key_de``, ``_value_de`` and ``_pending``, which both classes hold (and its
    # closing rule: ``_closed``, ``_pending``, ``_consumer``, ``_consumer_log``, ``_chain``).
    _prepare: Callable[..., None] = Consumer._prepare
    _with_headers: Callable[..., tuple[list[Message], bool]] = Consumer._with_headers
    _prepare_batch: Callable[..., tuple[list[Message], bool]] = Consumer._prepare_batch
    _close: Callable[..., None] = Consumer._close

    def poll(self, timeout: float = -1) -> Messages:
        """The next batch (confluent's ``Messages``: records and error events); empty on
        timeout or when interceptors left every record out.

        Raises DeserializationError for a record kept from an earlier batch (before
        fetching), or for the first failure of a batch in which no record deserialized.
        """
        if self._pending:
            raise self._pending.popleft()
        msgs = self._consumer.poll(timeout)
        if not msgs:
            return msgs
        batch = msgs.records()
        if self._key_de is None and self._value_de is None:
            out, events = self._with_headers(batch)
        else:
            out, events = self._prepare_batch(batch)
        if self._chain.on_consume and out:
            out = self._intercept(out, events)
        if not out and self._pending:
            raise self._pending.popleft()
        return Messages(out)

    def _intercept(self, out: list[Message], events: bool) -> list[Message]:
        """``on_consume`` over a batch's records (error events follow them, untouched); in
        explicit mode, the records it left out are accepted."""
        records = [m for m in out if m.error() is None] if events else out
        kept = self._chain.consume(records)
        if self._explicit and kept is not records:
            ids = {id(m) for m in kept}
            for msg in records:
                if id(msg) not in ids:
                    self._consumer.acknowledge(msg, AcknowledgeType.ACCEPT)
        return kept + [m for m in out if m.error() is not None] if events else kept

    # -- acknowledging ----------------------------------------------------------------------

    def set_acknowledgement_commit_callback(self, callback: AcknowledgementCallback | None) -> None:
        """Register ``callback(offsets, exception)`` for acknowledgement commit results, as
        confluent-kafka does; interceptors' ``on_commit`` still runs first (successes only).

        Raises TypeError when ``callback`` is neither callable nor None.
        """
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable or None")
        self._on_acknowledged = callback
        if self._chain.on_commit:
            return  # ours is installed and calls it
        self._consumer.set_acknowledgement_commit_callback(callback)  # type: ignore[arg-type]

    def _acknowledged(
        self, offsets: dict[TopicPartition, set[int]], error: KafkaException | None
    ) -> None:
        if error is None and offsets:
            self._chain.commit(acknowledged(offsets))
        if self._on_acknowledged is not None:
            self._on_acknowledged(offsets, error)

    def subscribe(self, topics: list[str]) -> None:
        """Subscribe to ``topics`` (replacing the subscription).

        Raises InvalidNameError for a topic holding NUL or not encodable as UTF-8, and what
        confluent-kafka raises (ValueError for an empty or duplicate name).
        """
        self._consumer.subscribe([check_name(t) for t in topics])

    # -- the rest ---------------------------------------------------------------------------

    @property
    def interceptors(self) -> InterceptorChain:
        """The interceptor chain (``.errors`` counts failures per interceptor)."""
        return self._chain

    @property
    def wrapped(self) -> confluent_kafka.ShareConsumer:
        """The underlying ``confluent_kafka.ShareConsumer``."""
        return self._consumer

    @property
    def group_id(self) -> str | None:
        """The share group (``group.id``) when known."""
        return self._group

    @property
    def explicit(self) -> bool:
        """Whether each record must be acknowledged (``share.acknowledgement.mode=explicit``)."""
        return self._explicit

    def close(self) -> None:
        """Close the share consumer (committing acknowledgements and leaving the group), then
        the interceptors; twice is a no-op.

        Raises HeldFailuresError (an ExceptionGroup of DeserializationError) once closed, when
        failures kept from the last batch were never raised. Records acquired and never
        acknowledged go back to the group when their locks expire.
        """
        self._close()

    def __repr__(self) -> str:
        n = len(self._chain.interceptors)
        return f"<kheaders.ShareConsumer wrapping {self._consumer!r}, {n} interceptors>"


def wrap_share_consumer(
    consumer: confluent_kafka.ShareConsumer,
    *,
    interceptors: Iterable[object] = (),
    key_deserializer: object = None,
    value_deserializer: object = None,
    strict: bool = False,
    config: Mapping[str, object] | None = None,
) -> ShareConsumer:
    """Wrap an existing ``confluent_kafka.ShareConsumer``, which the wrapper then owns.

    ``config`` is for what the wrapped consumer cannot tell: the settings it was built with
    (``group.id``, ``client.id``, ``bootstrap.servers`` for interceptors' attributes,
    ``share.acknowledgement.mode``) and kheaders' own keys, resolved as
    :class:`ShareConsumer` resolves its config; librdkafka never sees it. An acknowledgement
    commit callback registered on it before it was wrapped is replaced when an interceptor
    implements ``on_commit``: register it again on the wrapper.

    Raises TypeError for an object that is not a share consumer or an interceptor that
    implements no consumer hook, ConfigurationError for a bad setting.
    """
    refuse_async(consumer, "wrap_share_consumer")
    if not isinstance(consumer, confluent_kafka.ShareConsumer):
        raise TypeError(
            "wrap_share_consumer() takes a confluent_kafka.ShareConsumer, got"
            f" {type(consumer).__name__}"
        )
    config = config or {}
    mode = acknowledgement_mode(config)
    setup = resolve(
        config,
        interceptors=interceptors,
        key=key_deserializer,
        value=value_deserializer,
        producer=False,
        strict=strict,
    )
    self = ShareConsumer.__new__(ShareConsumer)
    self._setup(
        consumer, setup.chain, setup.key, setup.value, config.get("group.id"), mode == EXPLICIT
    )
    return self
