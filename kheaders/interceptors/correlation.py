"""Correlation ids: one ``correlation.id`` header follows a piece of work across services.

Producer side: :class:`CorrelationIdInterceptor` adds ``correlation.id`` (a uuid4 in text)
to every record that has none. When the record is produced while another record is being
handled (inside :func:`correlation_scope`, or after a single-record ``on_consume``), that
record's id is reused, so a relay passes the id on without code.

Consumer side: :func:`correlation_id` reads a record's id; :func:`correlation_scope` binds
it for the processing of one record, both for the producer side and in structlog's
context variables (``correlation_id=...`` then appears in every log event, when structlog
is configured with ``structlog.contextvars.merge_contextvars``, as it is by default).
The interceptor's ``on_consume`` binds the id of a single-record batch (``poll``) until the
next ``on_consume``; for multi-record batches use ``correlation_scope`` per record.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import structlog

from kheaders import ConfigurationError, ProducerRecord
from kheaders.interceptors._config import Config, get_bool, get_str
from kheaders.interceptors._tracing_common import message_headers
from kheaders.interceptors._tracing_consumer import AnyMessage

CORRELATION_HEADER = "correlation.id"
"""The header key used by default."""
LOG_KEY = "correlation_id"
"""The structlog context variable the id is bound to."""
HEADER_KEY = "kheaders.correlation.header"
"""Config key: the header key (default ``correlation.id``)."""
INHERIT_KEY = "kheaders.correlation.inherit"
"""Config key: reuse the id of the record being handled (default true)."""
BIND_KEY = "kheaders.correlation.bind"
"""Config key: bind single-record batches' ids in on_consume (default true)."""

_current: ContextVar[str | None] = ContextVar("kheaders_correlation_id", default=None)


def current_correlation_id() -> str | None:
    """The correlation id bound for the work in progress, or ``None``."""
    return _current.get()


def correlation_id(msg: object, header: str = CORRELATION_HEADER) -> str | None:
    """A received record's correlation id (its last ``correlation.id`` header), or ``None``.

    ``msg`` is a confluent ``Message`` or ``Headers``; a value that is not UTF-8 gives
    ``None``. Raises TypeError only for an unsupported ``msg``.

    >>> from kheaders import Headers
    >>> correlation_id(Headers([("correlation.id", b"c-1")]))
    'c-1'
    """
    value = message_headers(msg).last_value(header)
    if not isinstance(value, bytes):
        return None
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _bind(value: str | None) -> None:
    _current.set(value)
    if value is None:
        structlog.contextvars.unbind_contextvars(LOG_KEY)
    else:
        structlog.contextvars.bind_contextvars(**{LOG_KEY: value})


@contextmanager
def correlation_scope(msg: object, header: str = CORRELATION_HEADER) -> Iterator[str | None]:
    """Bind ``msg``'s correlation id while its processing runs; restore the previous one after.

    >>> from kheaders import Headers
    >>> with correlation_scope(Headers([("correlation.id", "c-9")])) as cid:
    ...     structlog.contextvars.get_contextvars()["correlation_id"]
    'c-9'
    """
    value = correlation_id(msg, header)
    token = _current.set(value)
    tokens = structlog.contextvars.bind_contextvars(**{LOG_KEY: value})
    try:
        yield value
    finally:
        structlog.contextvars.reset_contextvars(**tokens)
        _current.reset(token)


class CorrelationIdInterceptor:
    """Adds ``correlation.id`` to records without one; binds received ids for logging.

    Settings (constructor arguments win over config keys): ``header``
    (``kheaders.correlation.header``), ``inherit`` (``kheaders.correlation.inherit``: reuse
    the id bound for the record being handled instead of a new uuid4), ``bind``
    (``kheaders.correlation.bind``: bind single-record batches in ``on_consume``).

    >>> from kheaders import ProducerRecord
    >>> icpt = CorrelationIdInterceptor()
    >>> out = icpt.on_send(ProducerRecord("t", headers=[("correlation.id", "keep")]))
    >>> out.headers.values("correlation.id")
    [b'keep']

    Raises ConfigurationError for an empty header key.
    """

    __slots__ = ("_bind", "_explicit", "_header", "_inherit")
    config_keys = (HEADER_KEY, INHERIT_KEY, BIND_KEY)
    """The client settings it reads (kheaders routes them to it, never to librdkafka)."""

    def __init__(
        self,
        header: str | None = None,
        *,
        inherit: bool | None = None,
        bind: bool | None = None,
    ) -> None:
        if header is not None and not header:
            raise ConfigurationError("header: the correlation header key must not be empty")
        self._explicit = (header, inherit, bind)
        self._header = header or CORRELATION_HEADER
        self._inherit = True if inherit is None else inherit
        self._bind = True if bind is None else bind

    @property
    def header(self) -> str:
        """The header key this interceptor reads and writes."""
        return self._header

    def configure(self, config: Config) -> None:
        """Read the settings from config keys. Raises ConfigurationError for a bad value."""
        header, inherit, bind = self._explicit
        if header is None:
            self._header = get_str(config, HEADER_KEY, CORRELATION_HEADER) or CORRELATION_HEADER
        if inherit is None:
            self._inherit = get_bool(config, INHERIT_KEY, True)
        if bind is None:
            self._bind = get_bool(config, BIND_KEY, True)

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        """Add a correlation id when ``record`` has none (inherited, else a new uuid4)."""
        headers = record.headers
        if self._header in headers:
            return record
        if headers.read_only:
            headers = record.headers = headers.copy()
        value = _current.get() if self._inherit else None
        headers.add(self._header, value or str(uuid.uuid4()))
        return record

    def on_consume(self, messages: list[AnyMessage]) -> list[AnyMessage]:
        """Bind the id of a single-record batch for logging (unbind for other batches)."""
        if self._bind:
            if len(messages) == 1:
                _bind(correlation_id(messages[0], self._header))
            elif messages:
                _bind(None)
        return messages
