"""The lean produce path (no interceptor, no serializer) and header checks at the produce edge.

``lean_produce(raw.produce)`` is confluent-kafka's ``produce`` behind the Headers model's
checks (confluent-kafka would ``str()`` a ``bytes`` key silently) and the header limits.
The usual headers, a list of ``(str, bytes)`` tuples well within the limits, pass one plain
loop (:func:`~kheaders._model.limits.plain_fit`) and go to librdkafka as they are; anything else
goes through the Headers model (its error, or its normal form: ``str``/``bytearray`` values
as ``bytes``) and the exact limit check. It is a closure, not a method: one attribute
lookup fewer per record.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kheaders._errors import ReadOnlyHeadersError
from kheaders._model.headers import Header, Headers, HeaderTypes
from kheaders._model.limits import check_sendable, plain_fit

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message

    from kheaders._client.delivery import DeliveryCallback
    from kheaders._model.limits import HeaderLimits

EMPTY = Headers._trusted([], read_only=True)

READ_ONLY_AT_SEND = (
    "these headers are read-only: they were already sent (or received) with another record."
    " Headers belong to one record; pass a writable copy: Headers(old) or old.copy()"
)


def writable(headers: HeaderTypes) -> Headers:
    """The record's writable Headers; the given object itself when it is a Headers."""
    if headers is None:
        return Headers()
    if type(headers) is Headers:
        if headers._read_only:
            raise ReadOnlyHeadersError(READ_ONLY_AT_SEND)
        return headers
    return Headers(headers)


def _sendable(headers: HeaderTypes, limits: HeaderLimits | None) -> list[Header] | None:
    """The items to send for headers that are not plainly fine: the model's normal form.

    Raises what the Headers model raises (the first bad pair, in order; InvalidNameError for
    a key librdkafka cannot take), ReadOnlyHeadersError for closed Headers, HeaderLimitError
    over a limit.
    """
    items = writable(headers).close()._items
    check_sendable(items, limits)
    return items or None


def lean_produce(
    raw_produce: Callable[..., None], limits: HeaderLimits | None = None
) -> Callable[..., None]:
    """confluent-kafka's ``produce`` with headers checked and callbacks given Headers.

    With ``limits``, records with headers are checked against them (HeaderLimitError).
    """
    if limits is None:
        max_headers = max_key = max_value = max_total = sys.maxsize
    else:
        max_headers, max_key = limits.max_headers, limits.max_key_bytes
        max_value, max_total = limits.max_value_bytes, limits.max_total_bytes

    def produce(  # noqa: PLR0917 - confluent-kafka's positional signature
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int = -1,
        callback: DeliveryCallback | None = None,
        on_delivery: DeliveryCallback | None = None,
        timestamp: int = 0,
        headers: HeaderTypes = None,
    ) -> None:
        if callback is None and on_delivery is None:
            if headers is not None:
                if type(headers) is not list or not plain_fit(
                    headers, max_headers, max_key, max_value, max_total
                ):
                    headers = _sendable(headers, limits)
                elif not headers:
                    headers = None
            try:
                return raw_produce(topic, value, key, partition, None, None, timestamp, headers)
            except TypeError:
                if type(headers) is not list or all(isinstance(h, tuple) for h in headers):
                    raise  # not the headers' fault: the record's key or value
            # librdkafka takes tuples only: send the model's normal form of other pairs
            headers = _sendable(headers, limits)
            return raw_produce(topic, value, key, partition, None, None, timestamp, headers)
        cb: DeliveryCallback = callback or on_delivery  # type: ignore[assignment]
        closed = writable(headers).close() if headers is not None else EMPTY
        check_sendable(closed._items, limits)

        def report(err: KafkaError | None, msg: Message) -> None:
            msg.set_headers(closed)  # type: ignore[arg-type]
            cb(err, msg)

        return raw_produce(
            topic, value, key, partition, report, None, timestamp, closed._items or None
        )

    return produce
