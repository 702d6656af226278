"""How kheaders calls the confluent ``produce`` it wraps, and the error for unsendable data.

confluent's own C ``produce`` is called with its 8 arguments by position (its fastest call);
any other ``produce`` (a Python subclass's, ``SerializingProducer``'s, OpenTelemetry's
instrumented producer's) with keyword arguments, as its author expects.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import confluent_kafka

RawProduce = Callable[..., None]
"""confluent's ``produce`` taking its 8 arguments by position: ``(topic, value, key,
partition, callback, on_delivery, timestamp, headers)``."""

_C_PRODUCE = confluent_kafka.cimpl.Producer.produce
"""confluent's own ``produce`` (the C class: OpenTelemetry's ``instrument()`` replaces only
``confluent_kafka.Producer``, the name)."""


def raw_produce(raw: object, positional: bool) -> RawProduce:
    """confluent's ``produce``, called with its 8 arguments by position: ``(topic, value, key,
    partition, callback, on_delivery, timestamp, headers)``.

    confluent's own ``produce`` takes them so (its fastest call: keyword arguments cost it
    more than kheaders' whole check), as does the ``produce`` of a class the Producer
    declares as its ``_client_class`` (``positional``). Any other ``produce``
    (``SerializingProducer``'s, OpenTelemetry's instrumented producer's, a subclass's) is
    called with keyword arguments and a plain list of headers it may add to: OTel's
    instrumentation finds ``headers`` by keyword and appends ``traceparent``;
    ``SerializingProducer`` orders ``key`` before ``value``.
    """
    produce: RawProduce = raw.produce  # type: ignore[attr-defined]
    if positional or getattr(type(raw), "produce", None) is _C_PRODUCE:
        return produce
    return partial(_keywords, produce)


def _keywords(  # noqa: PLR0917 - confluent-kafka's positional order
    produce: RawProduce,
    topic: str,
    value: object,
    key: object,
    partition: int,
    callback: object,
    on_delivery: object,
    timestamp: int,
    headers: object,
) -> None:
    produce(
        topic,
        value=value,
        key=key,
        partition=partition,
        on_delivery=callback or on_delivery,
        timestamp=timestamp,
        headers=[] if headers is None else list(headers),  # type: ignore[call-overload]
    )


def unsendable(topic: str, key: object, value: object, exc: TypeError) -> TypeError:
    """The error for a key or value librdkafka cannot send (no serializer turned it to bytes)."""
    for field, data in (("value", value), ("key", key)):
        if data is not None and not isinstance(data, bytes | str):
            return TypeError(
                f"the {field} of a record to topic {topic!r} is {type(data).__name__}, which"
                f" confluent-kafka cannot send (it takes bytes, str or None): set a"
                f" {field}_serializer (e.g. kheaders.JsonSerializer()) or encode it first"
            )
    return exc
