"""Event: one CloudEvent (its attributes and data), and the shapes it is accepted in."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from kheaders._errors import CloudEventError
from kheaders.cloudevents._attributes import (
    SPECVERSION,
    AttributeValue,
    checked_attributes,
)


@dataclass(frozen=True, slots=True)
class Event:
    """A CloudEvent: validated attributes (read-only) and its data (``None``: no data).

    >>> e = Event({"specversion": "1.0", "id": "1", "source": "/orders", "type": "created"},
    ...           {"order": 7})
    >>> e.type, e["source"], e.data
    ('created', '/orders', {'order': 7})
    >>> e.time is None
    True

    ``time`` given as RFC 3339 text is held as an aware datetime (to the microsecond).
    Raises CloudEventError naming the attribute for a missing required attribute, a bad
    name or a value of the wrong type or form.
    """

    attributes: Mapping[str, Any]
    """The attributes, validated (``time`` a datetime); read-only."""
    data: Any = field(default=None)

    def __post_init__(self) -> None:
        checked = checked_attributes(self.attributes, writing=False)
        object.__setattr__(self, "attributes", MappingProxyType(checked))

    @classmethod
    def create(
        cls,
        type: str,
        source: str,
        data: object = None,
        *,
        id: str | None = None,
        time: datetime | str | None = None,
        **attributes: AttributeValue,
    ) -> Event:
        """An event with ``specversion`` 1.0 and, unless given, a fresh UUID as ``id``.

        Raises CloudEventError as the constructor does.
        """
        base: dict[str, object] = {
            "specversion": SPECVERSION,
            "id": id if id is not None else str(uuid.uuid4()),
            "source": source,
            "type": type,
        }
        if time is not None:
            base["time"] = time
        return cls({**base, **attributes}, data)

    @classmethod
    def _trusted(cls, attributes: Mapping[str, AttributeValue], data: object) -> Event:
        """An event from attributes already checked (this module's callers only)."""
        event = object.__new__(cls)
        object.__setattr__(event, "attributes", MappingProxyType(dict(attributes)))
        object.__setattr__(event, "data", data)
        return event

    def with_data(self, data: object) -> Event:
        """This event with ``data`` instead of its own (the attributes are not checked again)."""
        return Event._trusted(self.attributes, data)

    def __getitem__(self, name: str) -> AttributeValue:
        value: AttributeValue = self.attributes[name]
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.attributes)

    def get(self, name: str, default: AttributeValue | None = None) -> AttributeValue | None:
        """The attribute ``name``, or ``default`` when the event does not have it."""
        value: AttributeValue | None = self.attributes.get(name, default)
        return value

    @property
    def id(self) -> str:
        return str(self.attributes["id"])

    @property
    def source(self) -> str:
        return str(self.attributes["source"])

    @property
    def type(self) -> str:
        return str(self.attributes["type"])

    @property
    def time(self) -> datetime | None:
        value = self.attributes.get("time")
        return value if isinstance(value, datetime) else None

    @property
    def extensions(self) -> dict[str, AttributeValue]:
        """The attributes the spec does not define (partitionkey, traceparent, ...)."""
        return {k: v for k, v in self.attributes.items() if k not in _CORE}

    def to_sdk(self) -> Any:
        """This event as the CloudEvents SDK's ``cloudevents.core.v1.event.CloudEvent``.

        Raises ImportError (naming the ``cloudevents`` extra) when the SDK is missing.
        """
        try:
            from cloudevents.core.v1.event import CloudEvent
        except ImportError as exc:
            raise ImportError(
                "Event.to_sdk() needs the CloudEvents SDK: pip install 'kheaders[cloudevents]'"
            ) from exc
        return CloudEvent(dict(self.attributes), self.data)


_CORE = frozenset(
    ("id", "source", "specversion", "type", "datacontenttype", "dataschema", "subject", "time")
)


def event_of(value: object) -> Event:
    """``value`` as an Event: an Event, a CloudEvents SDK event (anything with
    ``get_attributes()`` and ``get_data()``), or a mapping of attributes with the data under
    ``"data"`` (the JSON format's shape; ``data_base64`` is the wire's business, refused).

    Raises CloudEventError for anything else, and as Event's constructor does.
    """
    if isinstance(value, Event):
        return value
    if isinstance(value, Mapping):
        if "data_base64" in value:
            raise CloudEventError(
                "give bytes as 'data' (data_base64 is how the JSON format writes them)",
                attribute="data_base64",
            )
        attributes = {k: v for k, v in value.items() if k != "data"}
        return Event(attributes, value.get("data"))
    get_attributes = getattr(value, "get_attributes", None)
    get_data = getattr(value, "get_data", None)
    if callable(get_attributes) and callable(get_data):
        return Event(dict(get_attributes()), get_data())
    raise CloudEventError(
        f"expected a CloudEvent (kheaders.cloudevents.Event, an SDK event or a mapping),"
        f" got {type(value).__name__}"
    )
