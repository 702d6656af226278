"""CloudEventSerializer and CloudEventDeserializer: kheaders serializers that see headers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from kheaders._errors import CloudEventError, ConfigurationError
from kheaders._model.headers import Headers
from kheaders._serde.protocols import Deserializer, Serializer
from kheaders.cloudevents import _binary, _data, _structured, _tracing
from kheaders.cloudevents._attributes import DATACONTENTTYPE
from kheaders.cloudevents._event import Event, event_of

Mode = Literal["binary", "structured"]
EventFactory = Callable[[dict[str, Any], Any], Any]
"""Builds the application's event from attributes and data (the SDK's ``CloudEvent``)."""


def _in_topic(topic: str, exc: CloudEventError) -> CloudEventError:
    return CloudEventError(f"topic {topic!r}: {exc}", attribute=exc.attribute)


class CloudEventSerializer:
    """Writes a CloudEvent as a record's value and headers, per the Kafka protocol binding.

    ``mode="binary"`` (the default) writes each attribute as a ``ce_`` header,
    ``datacontenttype`` as ``content-type`` and the data as the value; an event without
    data becomes a null value (a tombstone). ``mode="structured"`` writes the event as a
    JSON document with ``content-type: application/cloudevents+json``.

    Takes a :class:`~kheaders.cloudevents.Event`, a CloudEvents SDK event or a mapping of
    attributes with the data under ``"data"``; ``None`` gives a null record. The data goes
    through ``data_serializer`` when given (else bytes as they are, text as UTF-8, other
    values as JSON). With ``trace_headers`` (the default) the Distributed Tracing
    extension and the record's ``traceparent``/``tracestate`` headers fill each other in.
    The record's key is untouched (see :func:`~kheaders.cloudevents.partition_key`).

    >>> h = Headers()
    >>> CloudEventSerializer().serialize("t", h, {"specversion": "1.0", "id": "1",
    ...     "source": "/s", "type": "demo", "datacontenttype": "text/plain", "data": "hi"})
    b'hi'
    >>> h.keys()
    ['ce_specversion', 'ce_id', 'ce_source', 'ce_type', 'content-type']

    Raises ConfigurationError for an unknown mode; per record, CloudEventError (naming the
    topic and the attribute) for an event the spec does not allow.
    """

    __slots__ = ("_data", "_mode", "_trace")

    def __init__(
        self,
        mode: Mode = "binary",
        *,
        data_serializer: Serializer | None = None,
        trace_headers: bool = True,
    ) -> None:
        if mode not in ("binary", "structured"):
            raise ConfigurationError(f"mode: expected 'binary' or 'structured', got {mode!r}")
        if data_serializer is not None and not callable(
            getattr(data_serializer, "serialize", None)
        ):
            raise ConfigurationError("data_serializer has no serialize() method")
        self._mode = mode
        self._data = data_serializer
        self._trace = trace_headers

    @property
    def mode(self) -> Mode:
        return self._mode

    def serialize(self, topic: str, headers: Headers, data: object) -> bytes | None:
        if data is None:
            return None
        try:
            event = event_of(data)
            if self._trace:
                event = _tracing.event_from_headers(event, headers)
            if self._mode == "structured":
                out: bytes | None = _structured.write(topic, event, self._data)
                _binary.clear(headers)
                headers.add(_binary.CONTENT_TYPE, _structured.MEDIA_TYPE.encode("ascii"))
            else:
                event = self._implied_content_type(event)
                out = None if event.data is None else _data.encode(topic, event.data, self._data)
                _binary.write(event, headers)
        except CloudEventError as exc:
            raise _in_topic(topic, exc) from exc
        if self._trace:
            _tracing.headers_from_event(event, headers)
        return out

    def _implied_content_type(self, event: Event) -> Event:
        """``event`` with the ``datacontenttype`` the default encoding implies for its data
        (UTF-8 text, JSON) when it has none and no data serializer is set."""
        if self._data is not None or DATACONTENTTYPE in event.attributes:
            return event
        implied = _data.default_content_type(event.data)
        if implied is None:
            return event
        return Event._trusted({**event.attributes, DATACONTENTTYPE: implied}, event.data)


class StructuredCloudEventSerializer(CloudEventSerializer):
    """:class:`CloudEventSerializer` in structured mode (a class to name in a config's
    ``value.serializer``); takes the same keyword arguments."""

    __slots__ = ()

    def __init__(
        self, *, data_serializer: Serializer | None = None, trace_headers: bool = True
    ) -> None:
        super().__init__("structured", data_serializer=data_serializer, trace_headers=trace_headers)


class CloudEventDeserializer:
    """Reads the CloudEvent a record carries, in either content mode.

    The mode is chosen as the binding says: a ``content-type`` header starting with
    ``application/cloudevents`` means structured, anything else binary; a record without a
    ``ce_specversion`` header whose value is a JSON event is read as structured too (the
    Python SDK 1.x labels those with the data's content type, or none). A binary record
    without a value (or with an empty one) is an event without data. Data goes through
    ``data_deserializer`` when given (bytes data only), else JSON types decode to values,
    ``text/*`` to ``str``, anything else stays ``bytes``. Returns an
    :class:`~kheaders.cloudevents.Event`, or what ``event_factory(attributes, data)`` builds
    (e.g. the SDK's ``cloudevents.core.v1.event.CloudEvent``). With ``trace_headers`` (the
    default) an event without the Distributed Tracing extension takes it from the record's
    ``traceparent``/``tracestate`` headers. The record's key is not made an attribute.

    Raises, per record, CloudEventError (naming the topic and the attribute) for a record
    that is not a valid CloudEvent: a missing required attribute, an unknown specversion,
    a duplicate ``ce_`` header, a bad name, value, JSON document or encoding.
    """

    __slots__ = ("_data", "_factory", "_trace")

    def __init__(
        self,
        *,
        data_deserializer: Deserializer | None = None,
        event_factory: EventFactory | None = None,
        trace_headers: bool = True,
    ) -> None:
        if data_deserializer is not None and not callable(
            getattr(data_deserializer, "deserialize", None)
        ):
            raise ConfigurationError("data_deserializer has no deserialize() method")
        self._data = data_deserializer
        self._factory = event_factory
        self._trace = trace_headers

    def deserialize(self, topic: str, headers: Headers, data: bytes | None) -> Any:
        try:
            event = self.read(topic, headers, data)
        except CloudEventError as exc:
            raise _in_topic(topic, exc) from exc
        if self._factory is None:
            return event
        return self._factory(dict(event.attributes), event.data)

    def read(self, topic: str, headers: Headers, data: bytes | None) -> Event:
        """The record's event as an Event (``event_factory`` not applied).

        Raises CloudEventError as the class says (without the topic in the message).
        """
        content_types = [v for k, v in headers if k.lower() == _binary.CONTENT_TYPE]
        if len(content_types) > 1:
            raise CloudEventError(
                "duplicate header 'content-type': the content mode is ambiguous",
                attribute=DATACONTENTTYPE,
            )
        content_type = content_types[0] if content_types else None
        if _structured.is_structured(content_type):
            assert content_type is not None
            event = _structured.read(topic, headers, data, content_type, self._data)
        elif data is not None and not _binary.has_specversion(headers):
            event = self._without_ce_headers(topic, headers, data, content_type)
        else:
            event = _binary.read(topic, headers, data, self._data)
        if self._trace:
            event = _tracing.event_from_headers(event, headers)
        return event

    def _without_ce_headers(
        self, topic: str, headers: Headers, data: bytes, content_type: bytes | None
    ) -> Event:
        """A record with no ``ce_specversion`` header and no structured content type: not a
        binary event; a structured one when its value is a JSON object naming
        ``specversion`` (the Python SDK 1.x writes them so), else refused as binary mode
        refuses it (naming what is missing)."""
        if not _structured.looks_structured(data):
            return _binary.read(topic, headers, data, self._data)
        return _structured.read_mislabelled(topic, headers, data, content_type, self._data)
