"""Spring Kafka's retry-topic and dead-letter header names and their byte encodings.

(Was ``kheaders.processing.spring_headers``; that name works, with a DeprecationWarning,
for one release.)

Read from spring-kafka's ``RetryTopicHeaders``, ``KafkaHeaders`` and
``DeadLetterPublishingRecovererFactory`` (the Java source is the contract; nothing here is
copied from it):

* ``retry_topic-attempts``: 4-byte big-endian int, the number of the next delivery attempt
  (2 on the first retry); older Spring wrote 1 byte; absent or out of range means 1.
* ``retry_topic-backoff-timestamp`` / ``retry_topic-original-timestamp``: epoch milliseconds
  as Java's ``BigInteger.toByteArray()``: minimal big-endian two's complement.
* ``kafka_original-partition`` a 4-byte int, ``kafka_original-offset`` and
  ``kafka_original-timestamp`` 8-byte longs, the rest UTF-8 text.
"""

from __future__ import annotations

ATTEMPTS = "retry_topic-attempts"
BACKOFF_TIMESTAMP = "retry_topic-backoff-timestamp"
ORIGINAL_TIMESTAMP_RETRY = "retry_topic-original-timestamp"

ORIGINAL_TOPIC = "kafka_original-topic"
ORIGINAL_PARTITION = "kafka_original-partition"
ORIGINAL_OFFSET = "kafka_original-offset"
ORIGINAL_TIMESTAMP = "kafka_original-timestamp"
ORIGINAL_TIMESTAMP_TYPE = "kafka_original-timestamp-type"
ORIGINAL_CONSUMER_GROUP = "kafka_dlt-original-consumer-group"
"""Spring's ``KafkaHeaders.ORIGINAL_CONSUMER_GROUP``: its value does say ``dlt-``."""

EXCEPTION_FQCN = "kafka_exception-fqcn"
EXCEPTION_CAUSE_FQCN = "kafka_exception-cause-fqcn"
EXCEPTION_MESSAGE = "kafka_exception-message"
EXCEPTION_STACKTRACE = "kafka_exception-stacktrace"
KEY_EXCEPTION_FQCN = "kafka_key-exception-fqcn"
KEY_EXCEPTION_MESSAGE = "kafka_key-exception-message"
KEY_EXCEPTION_STACKTRACE = "kafka_key-exception-stacktrace"

DLT_EXCEPTION_FQCN = "kafka_dlt-exception-fqcn"
DLT_EXCEPTION_MESSAGE = "kafka_dlt-exception-message"
DLT_ORIGINAL_TOPIC = "kafka_dlt-original-topic"
DLT_ORIGINAL_PARTITION = "kafka_dlt-original-partition"
DLT_ORIGINAL_OFFSET = "kafka_dlt-original-offset"
"""The plain ``DeadLetterPublishingRecoverer``'s names (no retry topics): read, never written."""

ORIGINAL_HEADERS = (
    ORIGINAL_TOPIC,
    ORIGINAL_PARTITION,
    ORIGINAL_OFFSET,
    ORIGINAL_TIMESTAMP,
    ORIGINAL_TIMESTAMP_TYPE,
    ORIGINAL_CONSUMER_GROUP,
)
"""Written at a record's first failure and kept from then on."""
EXCEPTION_HEADERS = (
    EXCEPTION_FQCN,
    EXCEPTION_CAUSE_FQCN,
    EXCEPTION_MESSAGE,
    EXCEPTION_STACKTRACE,
    KEY_EXCEPTION_FQCN,
    KEY_EXCEPTION_MESSAGE,
    KEY_EXCEPTION_STACKTRACE,
)
"""Each replaced at every hop where it is written (earlier values removed, the new one last)."""
RETRY_HEADERS = (ORIGINAL_TIMESTAMP_RETRY, ATTEMPTS, BACKOFF_TIMESTAMP)
"""Appended as one set at every hop, in this order, earlier sets kept: readers take the last
value (the original timestamp's value is the first hop's)."""

ATTEMPTS_HARD_CAP = 100
"""Spring reads an attempts value outside 1..100 as 1."""

TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}
"""confluent-kafka's timestamp types as Spring writes them: ``TimestampType.toString()``, the
type's ``name`` field (``CreateTime``), not the enum constant (``CREATE_TIME``); checked
against Spring Kafka 4.1 in tests/interop/test_spring_retry.py."""

NO_TIMESTAMP_TYPE = "NoTimestampType"
"""Java's ``TimestampType.NO_TIMESTAMP_TYPE`` as Spring writes it."""


def encode_big_integer(value: int) -> bytes:
    """``value`` as Java's ``BigInteger.valueOf(value).toByteArray()``.

    >>> encode_big_integer(0), encode_big_integer(127), encode_big_integer(128), encode_big_integer(-1)
    (b'\\x00', b'\\x7f', b'\\x00\\x80', b'\\xff')
    """  # noqa: E501
    magnitude = value if value >= 0 else ~value  # Java's bitLength(): the sign bit left out
    length = magnitude.bit_length() // 8 + 1  # room for the sign bit: minimal two's complement
    return value.to_bytes(length, "big", signed=True)


def decode_big_integer(data: bytes) -> int:
    """The integer Java's ``new BigInteger(data)`` reads. Raises ValueError for empty bytes."""
    if not data:
        raise ValueError("a BigInteger needs at least one byte")
    return int.from_bytes(data, "big", signed=True)


def encode_int(value: int) -> bytes:
    """A 4-byte big-endian signed int (Java's ``ByteBuffer.putInt``). Raises OverflowError."""
    return value.to_bytes(4, "big", signed=True)


def encode_long(value: int) -> bytes:
    """An 8-byte big-endian signed long (Java's ``ByteBuffer.putLong``). Raises OverflowError."""
    return value.to_bytes(8, "big", signed=True)


def decode_fixed(data: bytes | None, size: int) -> int | None:
    """A big-endian signed int of exactly ``size`` bytes, or None for any other shape."""
    if data is None or len(data) != size:
        return None
    return int.from_bytes(data, "big", signed=True)


def decode_attempts(data: bytes | None) -> int:
    """The delivery attempt a record's ``retry_topic-attempts`` says, as Spring reads it.

    4 bytes (big-endian) or 1 byte (unsigned, older Spring); absent, another length or a
    value outside 1..100 reads as 1.

    >>> decode_attempts(None), decode_attempts(b"\\x00\\x00\\x00\\x03"), decode_attempts(b"\\x02")
    (1, 3, 2)
    """
    raw = data[0] if data is not None and len(data) == 1 else decode_fixed(data, 4)
    return raw if raw is not None and 1 <= raw <= ATTEMPTS_HARD_CAP else 1


def decode_timestamp(data: bytes | None) -> int | None:
    """Epoch ms from a ``retry_topic-*-timestamp`` value (1 to 8 bytes), else None."""
    if data is None or not 1 <= len(data) <= 8:
        return None
    return decode_big_integer(data)


__all__ = [n for n in sorted(dir()) if n.isupper() or n.startswith(("encode_", "decode_"))]
