"""The kheaders exception tree.

```
KHeadersError
├── ReadOnlyHeadersError     (also RuntimeError)  mutation of headers already handed to Kafka
├── DecodeError              (also ValueError)    malformed bytes; carries the offset at fault
├── HeaderLimitError         (also ValueError)    a configured header limit was exceeded
├── InvalidNameError         (also ValueError)    a header key or topic librdkafka cannot take
├── ConfigurationError       (also ValueError)    a bad setting (names the key at fault)
├── SerializationError       (also ValueError)    a key/value serializer failed for one record
├── DeserializationError     (also ValueError)    a deserializer failed; carries the raw record
│   └── IntegrityError                            a protected record did not decrypt or verify
├── HeldFailuresError        (also ExceptionGroup) failures consume() kept, raised by close()
├── BrokerUnavailableError   (also RuntimeError)  no broker could be found or started
├── CloudEventError          (also ValueError)    not a valid CloudEvent; names the attribute
├── AlreadyProtectedError    (also ValueError)    a record to protect already carries protection
├── UnknownKeyError          (also LookupError)   a keyring holds no key under the id asked for
├── ProcessingError          (also RuntimeError)  a processor cannot go on (names the record)
├── UnmirrorableRecordError  (also ValueError)    a record the mirror dead-lettered (the reason)
└── RefusedHopsError         (also ValueError)    a hops header the mirror will not read
```

Every leaf also inherits the builtin it refines, so code that catches ``ValueError``,
``LookupError`` or ``RuntimeError`` keeps working.
"""

from __future__ import annotations

from typing import Any


class KHeadersError(Exception):
    """Base of every exception kheaders raises on purpose."""


class ReadOnlyHeadersError(KHeadersError, RuntimeError):
    """Headers were mutated after they were closed (handed to Kafka, or received from it)."""


class DecodeError(KHeadersError, ValueError):
    """Bytes did not decode. ``offset`` is the byte position where decoding went wrong."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        self.reason = message
        self.offset = offset
        super().__init__(message if offset is None else f"{message} (at byte offset {offset})")

    def shifted(self, base: int) -> DecodeError:
        """This error with its offset moved by ``base``: for bytes decoded out of a larger
        buffer (a tagged field, a nested struct), so the offset stays absolute in it."""
        return DecodeError(self.reason, None if self.offset is None else self.offset + base)


class HeaderLimitError(KHeadersError, ValueError):
    """A record's headers exceed a configured limit (count, key size, value size or total)."""


class InvalidNameError(KHeadersError, ValueError):
    """A header key or topic name that cannot reach librdkafka intact: empty, holding NUL
    (librdkafka would cut it there) or not encodable as UTF-8 (a lone surrogate, which
    would crash it). The message names the text by ``repr``."""


class ConfigurationError(KHeadersError, ValueError):
    """A configuration value is invalid; the message names the setting."""


def kind_of(value: object) -> str:
    """How a refused argument is shown in a ConfigurationError: its type and, for a short
    plain value, its repr (never a config value: those may be secrets)."""
    name = type(value).__name__
    plain = isinstance(value, bool | int | float | str | bytes | list | tuple)
    return f"{name} {value!r}" if plain and len(repr(value)) <= 40 else name


class SerializationError(KHeadersError, ValueError):
    """A key or value serializer failed for one record; chained to the serializer's error."""

    def __init__(self, message: str, *, topic: str, field: str) -> None:
        self.topic = topic
        self.field = field
        super().__init__(message)


class DeserializationError(KHeadersError, ValueError):
    """A key or value deserializer failed; ``message`` is the raw, undecoded record.

    The consumer has already moved past this record (and only this one) when this is raised,
    so the application can route ``message`` to a dead-letter topic and keep polling.
    """

    def __init__(self, text: str, *, message: Any, field: str) -> None:
        self.message = message
        self.field = field
        super().__init__(text)


class HeldFailuresError(KHeadersError, ExceptionGroup[DeserializationError]):
    """Deserialization failures ``Consumer.consume()`` kept for a later call, raised by
    ``close()`` so none is lost; ``exceptions`` holds the DeserializationErrors (each with its
    raw record, e.g. for a dead-letter topic). ``except* DeserializationError`` works too."""


def held_failures(failures: list[DeserializationError]) -> HeldFailuresError:
    """The HeldFailuresError for ``failures``, naming where each record was."""
    where = ", ".join(
        f"{m.topic()}[{m.partition()}]@{m.offset()}" for m in (f.message for f in failures[:10])
    )
    more = "" if len(failures) <= 10 else f" and {len(failures) - 10} more"
    return HeldFailuresError(
        f"{len(failures)} deserialization failures kept by consume() were not raised before"
        f" close: {where}{more}",
        failures,
    )


class BrokerUnavailableError(KHeadersError, RuntimeError):
    """No Kafka-protocol broker could be found or started."""


class CloudEventError(KHeadersError, ValueError):
    """A CloudEvent (or the record carrying one) breaks the CloudEvents spec or its Kafka
    binding. ``attribute`` names the attribute (or header) at fault when there is one; the
    message never shows an attribute's value.

    Raised by :mod:`kheaders.cloudevents`; inside a producer or consumer it reaches the
    application chained to the SerializationError or DeserializationError of that record.
    """

    def __init__(self, message: str, *, attribute: str | None = None) -> None:
        self.attribute = attribute
        super().__init__(message)


class IntegrityError(DeserializationError):
    """A protected record (``kheaders.protect``) was refused: it does not decrypt or verify, its
    protection headers are malformed, missing where required, or name an unknown key id,
    algorithm or version, or its context is not accepted. The message names the key id (never
    key bytes or plaintext); raised by the consumer, it also names topic, partition and offset
    and carries the raw record (``message``), so it takes the dead-letter path."""


class AlreadyProtectedError(KHeadersError, ValueError):
    """The record already carries a protection header (it would be protected twice)."""


class UnknownKeyError(KHeadersError, LookupError):
    """The keyring holds no key under this id (the message names the id)."""


class ProcessingError(KHeadersError, RuntimeError):
    """A processor cannot go on: a failed record with no retry or dead-letter topic, or a
    handler slower than ``max.poll.interval.ms``. Nothing past the record was committed."""


class UnmirrorableRecordError(KHeadersError, ValueError):
    """A source record the mirror cannot copy as it is (a header key the target client cannot
    carry, over the target's size limit, a refused hops header); it went to the dead-letter
    topic on the source cluster with this error as the reason."""


class RefusedHopsError(KHeadersError, ValueError):
    """A hops header the mirror will not read: the message says why (never echoes it)."""
