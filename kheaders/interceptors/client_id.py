"""ClientIdInterceptor: stamp each record with the producing client's id (and app name).

A ``client.id`` header is information for people and tools (which service wrote this
record?), not identity: any producer can write any value, so never use it for
authorization or auditing decisions. Use the broker's authenticated principal for that.
"""

from __future__ import annotations

from kheaders import ConfigurationError, ProducerRecord
from kheaders.interceptors._config import Config, get_str

CLIENT_ID_HEADER = "client.id"
"""The header key written by default (the KIP-82 header-key registry name for it)."""
APP_NAME_HEADER = "app.name"
"""The header key written for the application name by default."""

CLIENT_ID_KEY = "kheaders.client.id"
"""Config key: the client id to write (default: the producer's ``client.id``)."""
APP_NAME_KEY = "kheaders.app.name"
"""Config key: an application name to write (default: none)."""
CLIENT_ID_HEADER_KEY = "kheaders.client.id.header"
"""Config key: the header key for the client id (default ``client.id``)."""
APP_NAME_HEADER_KEY = "kheaders.app.name.header"
"""Config key: the header key for the application name (default ``app.name``)."""


class ClientIdInterceptor:
    """Producer interceptor writing ``client.id`` (and optionally ``app.name``) headers.

    The client id is ``client_id`` when given, else config ``kheaders.client.id``, else the
    producer's own ``client.id`` setting (read in :meth:`configure`); the app name is
    ``app_name`` or config ``kheaders.app.name``. Existing headers with those keys are
    replaced, never duplicated. Nothing is written while no value is known.

    >>> from kheaders import ProducerRecord
    >>> icpt = ClientIdInterceptor(app_name="billing")
    >>> icpt.configure({"client.id": "billing-7"})
    >>> icpt.on_send(ProducerRecord("t", b"v")).headers.to_dict()
    {'client.id': b'billing-7', 'app.name': b'billing'}

    Raises ConfigurationError for an empty header key.
    """

    __slots__ = ("_explicit", "_header", "_pairs")
    config_keys = (CLIENT_ID_KEY, APP_NAME_KEY, CLIENT_ID_HEADER_KEY, APP_NAME_HEADER_KEY)
    """The client settings it reads (kheaders routes them to it, never to librdkafka)."""

    def __init__(
        self,
        client_id: str | None = None,
        app_name: str | None = None,
        *,
        header: str = CLIENT_ID_HEADER,
        app_header: str = APP_NAME_HEADER,
    ) -> None:
        if not header or not app_header:
            raise ConfigurationError("header: a header key must not be empty")
        self._explicit = (client_id, app_name)
        self._header = (header, app_header)
        self._pairs: tuple[tuple[str, bytes], ...] = ()
        self._build(client_id, app_name)

    def _build(self, client_id: str | None, app_name: str | None) -> None:
        pairs = []
        if client_id:
            pairs.append((self._header[0], client_id.encode("utf-8")))
        if app_name:
            pairs.append((self._header[1], app_name.encode("utf-8")))
        self._pairs = tuple(pairs)

    def configure(self, config: Config) -> None:
        """Take the client id from config (explicit constructor values win)."""
        client_id, app_name = self._explicit
        header = get_str(config, CLIENT_ID_HEADER_KEY, self._header[0]) or CLIENT_ID_HEADER
        app_header = get_str(config, APP_NAME_HEADER_KEY, self._header[1]) or APP_NAME_HEADER
        self._header = (header, app_header)
        if client_id is None:
            client_id = get_str(config, CLIENT_ID_KEY) or get_str(config, "client.id")
        if app_name is None:
            app_name = get_str(config, APP_NAME_KEY)
        self._build(client_id, app_name)

    @property
    def headers(self) -> tuple[tuple[str, bytes], ...]:
        """The ``(key, value)`` pairs written to every record."""
        return self._pairs

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        """Set the client id / app name headers on ``record`` (replacing earlier ones)."""
        if self._pairs:
            headers = record.headers
            if headers.read_only:
                headers = record.headers = headers.copy()
            for key, value in self._pairs:
                headers.set(key, value)
        return record
