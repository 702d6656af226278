"""The lean produce path (no interceptor, no serializer) and header checks at the produce edge.

``lean_produce(raw.produce)`` is confluent-kafka's ``produce`` behind a check that header
keys are non-empty ``str`` (confluent-kafka would ``str()`` a ``bytes`` key silently); values
librdkafka refuses (``bytearray``, ``memoryview``) are normalised on the refusal, so valid
input pays nothing for it. It is a closure, not a method: one attribute lookup fewer per
record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kheaders._errors import ReadOnlyHeadersError
from kheaders._headers import Header, Headers, HeaderTypes, HeaderValue

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Message

    from kheaders._delivery import DeliveryCallback
    from kheaders._limits import HeaderLimits

EMPTY = Headers._trusted([], read_only=True)

READ_ONLY_AT_SEND = (
    "these headers are read-only: they were already sent (or received) with another record."
    " Headers belong to one record; pass a writable copy: Headers(old) or old.copy()"
)


def _normalised(headers: list[tuple[str, HeaderValue]], exc: TypeError) -> list[Header] | None:
    """Headers librdkafka refused, normalised as Headers would store them.

    Raises the Headers model's error (naming the header), or ``exc`` itself when the headers
    were not the problem.
    """
    if all(v is None or type(v) is bytes or type(v) is str for _, v in headers):
        raise exc  # librdkafka takes these values: the key or value of the record is at fault
    try:
        return Headers(headers)._items or None
    except (TypeError, ValueError) as bad:
        raise bad from None


def writable(headers: HeaderTypes) -> Headers:
    """The record's writable Headers; the given object itself when it is a Headers."""
    if headers is None:
        return Headers()
    if type(headers) is Headers:
        if headers._read_only:
            raise ReadOnlyHeadersError(READ_ONLY_AT_SEND)
        return headers
    return Headers(headers)


def lean_produce(
    raw_produce: Callable[..., None], limits: HeaderLimits | None = None
) -> Callable[..., None]:
    """confluent-kafka's ``produce`` with header keys checked and callbacks given Headers.

    With ``limits``, records with headers are checked against them (HeaderLimitError).
    """
    check = limits.check if limits is not None else None

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
                if type(headers) is list:
                    for h in headers:
                        k = h[0]
                        if type(k) is not str or not k:
                            # the model's verdict: its error (the first bad pair, in order),
                            # or its normal form (e.g. a str subclass key)
                            headers = Headers(headers)._items
                            break
                    if not headers:
                        headers = None
                else:
                    headers = writable(headers).close()._items or None
                if headers and check is not None:
                    check(headers)
            try:
                return raw_produce(topic, value, key, partition, None, None, timestamp, headers)
            except TypeError as exc:  # e.g. a bytearray value: confluent takes bytes/str only
                if type(headers) is not list:
                    raise
                headers = _normalised(headers, exc)
            return raw_produce(topic, value, key, partition, None, None, timestamp, headers)
        cb: DeliveryCallback = callback or on_delivery  # type: ignore[assignment]
        closed = writable(headers).close() if headers is not None else EMPTY
        if closed._items and check is not None:
            check(closed._items)

        def report(err: KafkaError | None, msg: Message) -> None:
            msg.set_headers(closed)  # type: ignore[arg-type]
            cb(err, msg)

        return raw_produce(
            topic, value, key, partition, report, None, timestamp, closed._items or None
        )

    return produce
