"""LoggingInterceptor: one structlog event per send, acknowledgement, consumed record, commit.

Events (all carry ``topic``/``partition``/``offset`` where known, the ``key`` as printable
text cut to ``key_limit`` characters, ``trace_id`` from the record's ``traceparent``,
``client_id``, and ``headers`` as ``[key, text]`` pairs with sensitive values redacted):

- ``kafka.send``          before the record is serialized and handed to librdkafka
- ``kafka.ack``           on acknowledgement, with ``latency_ms`` since ``kafka.send``;
                          failures carry ``error`` and are logged at ``warning`` or above
- ``kafka.consume``       one per received record (``consume="record"``, the default), or
                          one per batch with ``count`` and per-partition offset ranges
                          (``consume="batch"``)
- ``kafka.commit``        with ``offsets`` as ``[topic, partition, offset]`` triples

Redaction (see :mod:`kheaders._model.redact`): values of sensitive keys (``authorization``,
``cookie``, keys containing ``token``, ``secret``, ``password``, ``credential``, ``apikey``...,
or ending in ``key``) and credential-shaped values under any key (JWTs, ``Bearer``/``Basic``
credentials, well-known token prefixes) are shown as ``<redacted>``; header keys are escaped.
Config keys: ``kheaders.logging.level`` (debug|info|warning|error, default info),
``kheaders.logging.redact`` (bool, default true), ``kheaders.logging.redact.extra`` and
``kheaders.logging.redact.allow`` (comma-separated keys), ``kheaders.logging.redact.values``
(bool, default true: detect credential-shaped values), ``kheaders.logging.consume``
(record|batch), ``kheaders.logging.headers`` (bool: include headers, default true).

When the logger does not log at the chosen level (structlog's filtering bound logger),
every hook returns at once: the decision is taken at construction and in ``configure``.
"""

from __future__ import annotations

import logging as _stdlib_logging
import time
from collections.abc import Callable
from typing import Any

import structlog
from confluent_kafka import TopicPartition

from kheaders import ConfigurationError, Headers, ProducerRecord, RecordMetadata
from kheaders.interceptors._config import Config, get_bool, get_choice, get_list, get_str
from kheaders.interceptors._tracing_common import message_headers
from kheaders.interceptors._tracing_consumer import AnyMessage
from kheaders.redaction import Redactor, printable, render_headers, render_value
from kheaders.tracecontext import extract_trace_parent

LEVEL_KEY = "kheaders.logging.level"
REDACT_KEY = "kheaders.logging.redact"
REDACT_EXTRA_KEY = "kheaders.logging.redact.extra"
REDACT_ALLOW_KEY = "kheaders.logging.redact.allow"
REDACT_VALUES_KEY = "kheaders.logging.redact.values"
CONSUME_KEY = "kheaders.logging.consume"
HEADERS_KEY = "kheaders.logging.headers"

LEVELS = ("debug", "info", "warning", "error")
_LEVEL_NUMBERS = {name: getattr(_stdlib_logging, name.upper()) for name in LEVELS}
_MAX_PENDING = 100_000

Event = dict[str, object]


def _key_text(key: object, limit: int) -> str | None:
    if key is None:
        return None
    if isinstance(key, bytes):
        return render_value(key, limit)
    text = key if isinstance(key, str) else repr(key)
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= limit else text[:limit] + "…"


def _trace_id(headers: Headers) -> str | None:
    tp = extract_trace_parent(headers)
    return None if tp is None else tp.trace_id_hex


class LoggingInterceptor:
    """Producer and consumer interceptor logging each record's journey with structlog.

    ``level`` is the level of the events (failed deliveries use at least ``warning``);
    ``logger`` defaults to ``structlog.get_logger("kheaders")``; ``redact`` is ``True``
    (the default rule), ``False``, or a :class:`kheaders.redaction.Redactor`; ``redact_extra`` and
    ``redact_allow`` extend the default rule; ``consume`` is ``"record"`` or ``"batch"``.

    Raises ConfigurationError for an unknown level or consume mode.
    """

    __slots__ = (
        "_client_id",
        "_consume",
        "_emit",
        "_enabled",
        "_explicit",
        "_headers",
        "_key_limit",
        "_logger",
        "_pending",
        "_redactor",
        "_value_limit",
        "_warn",
    )
    config_keys = (
        LEVEL_KEY,
        REDACT_KEY,
        REDACT_EXTRA_KEY,
        REDACT_ALLOW_KEY,
        REDACT_VALUES_KEY,
        CONSUME_KEY,
        HEADERS_KEY,
    )
    """The client settings it reads (kheaders routes them to it, never to librdkafka)."""

    def __init__(
        self,
        level: str | None = None,
        *,
        logger: Any = None,
        redact: Redactor | bool | None = None,
        redact_extra: tuple[str, ...] | list[str] | None = None,
        redact_allow: tuple[str, ...] | list[str] | None = None,
        consume: str | None = None,
        include_headers: bool | None = None,
        key_limit: int = 64,
        value_limit: int = 256,
    ) -> None:
        if level is not None and level.lower() not in LEVELS:
            raise ConfigurationError(f"level: expected one of {', '.join(LEVELS)}, got {level!r}")
        if consume is not None and consume not in ("record", "batch"):
            raise ConfigurationError(f"consume: expected record or batch, got {consume!r}")
        self._explicit = (level, redact, redact_extra, redact_allow, consume, include_headers)
        self._logger = logger if logger is not None else structlog.get_logger("kheaders")
        self._key_limit = key_limit
        self._value_limit = value_limit
        self._client_id: str | None = None
        self._pending: dict[int, tuple[Headers, float]] = {}
        self._apply({})

    def _apply(self, config: Config) -> None:
        level, redact, extra, allow, consume, include = self._explicit
        name = (level or get_choice(config, LEVEL_KEY, "info", LEVELS)).lower()
        if isinstance(redact, Redactor):
            self._redactor = redact
        else:
            enabled = get_bool(config, REDACT_KEY, True) if redact is None else redact
            self._redactor = Redactor(
                extra=tuple(
                    extra if extra is not None else get_list(config, REDACT_EXTRA_KEY) or ()
                ),
                allow=tuple(
                    allow if allow is not None else get_list(config, REDACT_ALLOW_KEY) or ()
                ),
                enabled=enabled,
                values=get_bool(config, REDACT_VALUES_KEY, True),
            )
        self._consume = consume or get_choice(config, CONSUME_KEY, "record", ("record", "batch"))
        self._headers = get_bool(config, HEADERS_KEY, True) if include is None else include
        bound = self._logger.bind()  # resolve structlog's lazy proxy once
        number = _LEVEL_NUMBERS[name]
        is_enabled = getattr(bound, "is_enabled_for", None)
        self._enabled = bool(is_enabled(number)) if callable(is_enabled) else True
        self._emit: Callable[..., Any] = getattr(bound, name)
        self._warn: Callable[..., Any] = getattr(
            bound, name if number >= _stdlib_logging.WARNING else "warning"
        )

    def configure(self, config: Config) -> None:
        """Read the settings (constructor arguments win) and ``client.id``.

        Raises ConfigurationError naming a bad key.
        """
        self._client_id = get_str(config, "client.id")
        self._apply(config)

    @property
    def enabled(self) -> bool:
        """Whether events are emitted at all (the logger logs at the chosen level)."""
        return self._enabled

    def _common(self, headers: Headers, key: object) -> Event:
        event: Event = {}
        text = _key_text(key, self._key_limit)
        if text is not None:
            event["key"] = text
        trace_id = _trace_id(headers)
        if trace_id is not None:
            event["trace_id"] = trace_id
        if self._client_id is not None:
            event["client_id"] = self._client_id
        if self._headers:
            event["headers"] = render_headers(headers, self._redactor, self._value_limit)
        return event

    # -- producer -------------------------------------------------------------------------------

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        """Log ``kafka.send`` and remember the time for the acknowledgement's latency."""
        if not self._enabled:
            return record
        headers = record.headers
        pending = self._pending
        pending[id(headers)] = (headers, time.perf_counter())
        if len(pending) > _MAX_PENDING:
            pending.pop(next(iter(pending)), None)
        event = self._common(headers, record.key)
        if record.partition is not None:
            event["partition"] = record.partition
        self._emit("kafka.send", topic=record.topic, **event)
        return record

    def on_acknowledgement(
        self, metadata: RecordMetadata, error: BaseException | object | None, headers: Headers
    ) -> None:
        """Log ``kafka.ack`` with partition, offset and ``latency_ms`` (warning on failure)."""
        if not self._enabled:
            return
        sent = self._pending.pop(id(headers), None)
        event: Event = {"topic": metadata.topic}
        if metadata.partition >= 0:
            event["partition"] = metadata.partition
        if metadata.offset >= 0:
            event["offset"] = metadata.offset
        if sent is not None and sent[0] is headers:
            event["latency_ms"] = round((time.perf_counter() - sent[1]) * 1000.0, 3)
        trace_id = _trace_id(headers)
        if trace_id is not None:
            event["trace_id"] = trace_id
        if self._client_id is not None:
            event["client_id"] = self._client_id
        if error is None:
            self._emit("kafka.ack", **event)
        else:
            self._warn("kafka.ack", error=str(error), **event)

    # -- consumer -------------------------------------------------------------------------------

    def on_consume(self, messages: list[AnyMessage]) -> list[AnyMessage]:
        """Log ``kafka.consume`` per record (or per batch); return ``messages`` unchanged."""
        if not self._enabled or not messages:
            return messages
        if self._consume == "batch":
            self._log_batch(messages)
            return messages
        for msg in messages:
            if msg.error() is not None:
                continue
            event = self._common(message_headers(msg), msg.key())
            self._emit(
                "kafka.consume",
                topic=printable(msg.topic() or ""),  # the broker's text: escaped
                partition=msg.partition(),
                offset=msg.offset(),
                **event,
            )
        return messages

    def _log_batch(self, messages: list[AnyMessage]) -> None:
        ranges: dict[tuple[str, int], list[int]] = {}
        count = 0
        for msg in messages:
            if msg.error() is not None:
                continue
            count += 1
            offset = msg.offset() or 0
            span = ranges.setdefault((msg.topic() or "", msg.partition() or 0), [offset, offset])
            span[0] = min(span[0], offset)
            span[1] = max(span[1], offset)
        event: Event = {
            "count": count,
            "partitions": [[t, p, lo, hi] for (t, p), (lo, hi) in ranges.items()],
        }
        if self._client_id is not None:
            event["client_id"] = self._client_id
        self._emit("kafka.consume", **event)

    def on_commit(self, offsets: list[TopicPartition]) -> None:
        """Log ``kafka.commit`` with ``[topic, partition, offset]`` triples."""
        if not self._enabled:
            return
        event: Event = {"offsets": [[tp.topic, tp.partition, tp.offset] for tp in offsets]}
        if self._client_id is not None:
            event["client_id"] = self._client_id
        self._emit("kafka.commit", **event)

    def close(self) -> None:
        """Forget the send times of records never acknowledged."""
        self._pending = {}
