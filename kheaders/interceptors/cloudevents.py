"""CloudEventInterceptor: plain records become CloudEvents before serialization.

Each record whose value is not already an event gets an event around it: ``source`` and
``type`` from the interceptor's settings (per topic, else the defaults), ``id`` from the
record's ``message-id`` header when it has a usable one (else a fresh UUID), ``time`` from
the record's timestamp (else now), the value as the data. Pair it with
:class:`kheaders.cloudevents.CloudEventSerializer` as the value serializer.

============================================  ==============================================
``kheaders.cloudevents.source``               default ``source`` (a URI-reference)
``kheaders.cloudevents.type``                 default ``type``
``kheaders.cloudevents.topic.<topic>.source`` ``source`` for one topic (topic names may hold
``kheaders.cloudevents.topic.<topic>.type``   dots: the setting's last part is the attribute)
``kheaders.cloudevents.id.header``            header holding the message id (``message-id``)
``kheaders.cloudevents.partitionkey``         true: a record without a key gets the event's
                                              ``partitionkey`` (the binding's opt-in mapper)
============================================  ==============================================
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime

from kheaders import ConfigurationError, ProducerRecord
from kheaders.cloudevents import CloudEventError, Event, event_of, partition_key
from kheaders.interceptors._config import Config, get_bool, get_str

SOURCE_KEY = "kheaders.cloudevents.source"
TYPE_KEY = "kheaders.cloudevents.type"
TOPIC_PREFIX = "kheaders.cloudevents.topic."
ID_HEADER_KEY = "kheaders.cloudevents.id.header"
PARTITIONKEY_KEY = "kheaders.cloudevents.partitionkey"
MESSAGE_ID_HEADER = "message-id"
"""The header whose value becomes the event's ``id`` by default."""

_Names = tuple[str | None, str | None]


def _is_event(value: object) -> bool:
    """An Event, an SDK event, or a mapping that says it is one (has ``specversion``)."""
    if isinstance(value, Event):
        return True
    if isinstance(value, Mapping):
        return "specversion" in value
    return callable(getattr(value, "get_attributes", None))


class CloudEventInterceptor:
    """Producer interceptor turning plain records into CloudEvents (see the module doc).

    Records already carrying an event pass unchanged (the key mapping aside). Explicit
    arguments win over the config's settings.

    >>> icpt = CloudEventInterceptor(source="/billing", type="invoice.created")
    >>> record = icpt.on_send(ProducerRecord("invoices", {"n": 7}, headers=[("message-id", "m-1")]))
    >>> record.value.id, record.value.type, record.value.data
    ('m-1', 'invoice.created', {'n': 7})

    Raises ConfigurationError (naming the setting) for a bad setting, and per record for a
    topic with no ``source`` or ``type`` (the chain then passes the record on unchanged, and
    the CloudEventSerializer refuses it); CloudEventError when the event is invalid.
    """

    __slots__ = ("_default", "_id_header", "_key", "_topics")
    config_keys = (SOURCE_KEY, TYPE_KEY, TOPIC_PREFIX, ID_HEADER_KEY, PARTITIONKEY_KEY)
    """The client settings it reads (kheaders routes them to it, never to librdkafka)."""

    def __init__(
        self,
        source: str | None = None,
        type: str | None = None,
        *,
        topics: Mapping[str, Mapping[str, str]] | None = None,
        id_header: str = MESSAGE_ID_HEADER,
        partition_key: bool = False,
    ) -> None:
        self._default: _Names = (source, type)
        self._topics: dict[str, _Names] = {
            topic: (names.get("source"), names.get("type"))
            for topic, names in (topics or {}).items()
        }
        self._id_header = id_header
        self._key = partition_key

    def configure(self, config: Config) -> None:
        """Read the settings (see the module doc); explicit arguments keep precedence."""
        source, type_ = self._default
        self._default = (source or get_str(config, SOURCE_KEY), type_ or get_str(config, TYPE_KEY))
        for key in config:
            if not isinstance(key, str) or not key.startswith(TOPIC_PREFIX):
                continue
            topic, _, attribute = key[len(TOPIC_PREFIX) :].rpartition(".")
            if not topic or attribute not in ("source", "type"):
                raise ConfigurationError(
                    f"{key}: expected {TOPIC_PREFIX}<topic>.source or {TOPIC_PREFIX}<topic>.type"
                )
            have = self._topics.get(topic, (None, None))
            value = get_str(config, key)
            self._topics[topic] = (
                (have[0] or value, have[1])
                if attribute == "source"
                else (have[0], have[1] or value)
            )
        self._id_header = get_str(config, ID_HEADER_KEY, self._id_header) or MESSAGE_ID_HEADER
        self._key = self._key or get_bool(config, PARTITIONKEY_KEY, False)

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        if not _is_event(record.value):
            record.value = self._event(record)
        if self._key and record.key is None:
            record.key = partition_key(record.value)
        return record

    def _event(self, record: ProducerRecord) -> Event:
        source, type_ = self._topics.get(record.topic, (None, None))
        source = source or self._default[0]
        type_ = type_ or self._default[1]
        if not source or not type_:
            raise ConfigurationError(
                f"topic {record.topic!r}: no CloudEvents source and type configured"
                f" ({SOURCE_KEY}, {TYPE_KEY} or {TOPIC_PREFIX}{record.topic}.source/.type)"
            )
        stamp = (
            datetime.fromtimestamp(record.timestamp / 1000, UTC)
            if record.timestamp is not None
            else datetime.now(UTC)
        )
        return Event.create(type_, source, record.value, id=self._id(record), time=stamp)

    def _id(self, record: ProducerRecord) -> str:
        raw = record.headers.last_value(self._id_header)
        if raw:
            try:
                text = raw.decode("utf-8")
                event_of({"specversion": "1.0", "id": text, "source": "/", "type": "t"})
            except (UnicodeDecodeError, CloudEventError):
                pass  # not usable as an id (not UTF-8, a NUL, too long): a fresh one instead
            else:
                return text
        return str(uuid.uuid4())
