"""The consumer side of tracing: ``process_span`` and TracingConsumerInterceptor (poll spans)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeAlias

from confluent_kafka import Message
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind

from kheaders.interceptors._config import Config, get_bool, get_list, get_str, server_attributes
from kheaders.interceptors._tracing_common import (
    BATCH_COUNT,
    CLIENT_ID,
    CONFIG_KEYS,
    CONSUMER_GROUP,
    DESTINATION_NAME,
    LINK_ONLY_KEY,
    LINK_ONLY_TOPICS_KEY,
    MESSAGE_KEY,
    MESSAGING_SYSTEM,
    OFFSET,
    OPERATION_NAME,
    OPERATION_TYPE,
    PARTITION_ID,
    Attributes,
    extract,
    get_tracer,
    key_text,
    message_headers,
    remote_span_context,
)

AnyMessage: TypeAlias = "Message[Any, Any]"
"""A confluent-kafka Message whatever its key and value types."""


def _record_attrs(msg: AnyMessage) -> Attributes:
    """Per-record attributes: partition id, offset and (text) key of a confluent Message."""
    attrs: Attributes = {}
    partition = msg.partition()
    if partition is not None and partition >= 0:
        attrs[PARTITION_ID] = str(partition)
    offset = msg.offset()
    if offset is not None and offset >= 0:
        attrs[OFFSET] = offset
    key = key_text(msg.key())
    if key is not None:
        attrs[MESSAGE_KEY] = key
    return attrs


@contextmanager
def process_span(
    msg: AnyMessage,
    tracer: trace.Tracer | None = None,
    *,
    link_only: bool = False,
    consumer_group: str | None = None,
    tracer_provider: trace.TracerProvider | None = None,
) -> Iterator[Span]:
    """A current CONSUMER span ``process {topic}`` around the processing of one record.

    The span's parent is the record's creation context (strict W3C rules: a missing,
    invalid or duplicated ``traceparent`` starts a new trace). With ``link_only=True``
    (for topics written by untrusted producers) it always starts a new trace and only
    links to the record's context; baggage from the record is then ignored too.
    Exceptions escaping the block are recorded on the span and re-raised.

    >>> from confluent_kafka import Message
    >>> msg = Message(topic="orders", partition=0, offset=7, key=b"k1", value=b"v")
    >>> with process_span(msg) as span:
    ...     pass
    """
    headers = message_headers(msg)
    topic = msg.topic() or ""
    attrs: Attributes = {
        MESSAGING_SYSTEM: "kafka",
        OPERATION_NAME: "process",
        OPERATION_TYPE: "process",
        DESTINATION_NAME: topic,
        **_record_attrs(msg),
    }
    if consumer_group:
        attrs[CONSUMER_GROUP] = consumer_group
    links: Sequence[Link] = ()
    if link_only:
        parent = Context()
        remote = remote_span_context(headers)
        if remote is not None:
            links = (Link(remote),)
    else:
        parent = extract(headers)
    use = tracer if tracer is not None else get_tracer(tracer_provider)
    with use.start_as_current_span(
        f"process {topic}", context=parent, kind=SpanKind.CONSUMER, attributes=attrs, links=links
    ) as span:
        yield span


class TracingConsumerInterceptor:
    """Consumer interceptor: a CLIENT span ``poll {topic}`` per batch, linked to each record.

    Each record with a valid creation context (strict W3C rules) adds a link carrying its
    ``messaging.kafka.offset``, ``messaging.destination.partition.id`` and
    ``messaging.kafka.message.key``; the span carries ``messaging.batch.message_count`` (or, for a
    single record, that record's attributes, as the conventions ask).
    A batch spanning several topics gets one span per topic. Messages are returned unchanged
    (error events such as partition EOF are counted out and not linked).
    Per-record processing spans are the application's: see :func:`process_span`.

    Config: ``group.id``, ``client.id`` and ``bootstrap.servers`` feed span attributes;
    ``kheaders.tracing.link.only`` (bool, default false) and
    ``kheaders.tracing.link.only.topics`` (comma-separated topics written by untrusted
    producers) make :meth:`process_span` start new traces that only link to the record.
    """

    __slots__ = ("_base", "_link_only", "_link_topics", "_provider", "_settings", "_tracer")
    config_keys = CONFIG_KEYS
    """The client settings it reads (kheaders routes them to it, never to librdkafka)."""

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        link_only: bool | None = None,
        link_only_topics: tuple[str, ...] | list[str] | None = None,
    ) -> None:
        self._provider = tracer_provider
        self._tracer = get_tracer(tracer_provider)
        self._settings = link_only
        self._link_only = bool(link_only)
        self._link_topics: frozenset[str] | None = (
            None if link_only_topics is None else frozenset(link_only_topics)
        )
        self._base: Attributes = {
            MESSAGING_SYSTEM: "kafka",
            OPERATION_NAME: "poll",
            OPERATION_TYPE: "receive",
        }

    def configure(self, config: Config) -> None:
        """Read ``group.id``, ``client.id``, ``bootstrap.servers`` and the link-only switch.

        Raises ConfigurationError naming a bad key.
        """
        if self._settings is None:
            self._link_only = get_bool(config, LINK_ONLY_KEY, False)
        if self._link_topics is None:
            topics = get_list(config, LINK_ONLY_TOPICS_KEY)
            self._link_topics = None if topics is None else frozenset(topics)
        self._tracer = get_tracer(self._provider)
        base: Attributes = {
            MESSAGING_SYSTEM: "kafka",
            OPERATION_NAME: "poll",
            OPERATION_TYPE: "receive",
        }
        group = get_str(config, "group.id")
        if group:
            base[CONSUMER_GROUP] = group
        client_id = get_str(config, "client.id")
        if client_id:
            base[CLIENT_ID] = client_id
        base.update(server_attributes(config))
        self._base = base

    @property
    def link_only(self) -> bool:
        """Whether :meth:`process_span` starts new traces (links only) for these records."""
        return self._link_only

    def on_consume(self, messages: list[AnyMessage]) -> list[AnyMessage]:
        """Record one ``poll {topic}`` span per topic in the batch; return ``messages``."""
        if not messages:
            return messages
        by_topic: dict[str, list[AnyMessage]] = {}
        for msg in messages:
            if msg.error() is not None:
                continue
            by_topic.setdefault(msg.topic() or "", []).append(msg)
        for topic, batch in by_topic.items():
            links = []
            for msg in batch:
                remote = remote_span_context(message_headers(msg))
                if remote is not None:
                    links.append(Link(remote, _record_attrs(msg)))
            attrs = dict(self._base)
            attrs[DESTINATION_NAME] = topic
            if len(batch) == 1:  # semconv: no batch count on a single-message span
                attrs.update(_record_attrs(batch[0]))
            else:
                attrs[BATCH_COUNT] = len(batch)
            self._tracer.start_span(
                f"poll {topic}", kind=SpanKind.CLIENT, attributes=attrs, links=links
            ).end()
        return messages

    def process_span(self, msg: AnyMessage) -> AbstractContextManager[Span]:
        """:func:`process_span` for ``msg`` with this interceptor's tracer and settings."""
        group = self._base.get(CONSUMER_GROUP)
        return process_span(
            msg,
            self._tracer,
            link_only=self._link_only
            or (self._link_topics is not None and msg.topic() in self._link_topics),
            consumer_group=group if isinstance(group, str) else None,
        )
