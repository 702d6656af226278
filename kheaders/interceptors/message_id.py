"""MessageIdInterceptor: stamp each record with a unique message id (UUIDv7) when first produced.

The id (``kheaders.message.id``, 16 bytes) is written once: a record that already carries
one (a copy made by a mirror, a retry through the same code) keeps it, so every copy of a
message anywhere has the same id and a consumer's ``kheaders.mirror.Deduplicator`` can
recognise duplicates. UUIDv7 ids sort by creation time to the millisecond.
"""

from __future__ import annotations

from kheaders import ProducerRecord
from kheaders.mirror import MESSAGE_ID, uuid7_bytes

__all__ = ["MESSAGE_ID", "MessageIdInterceptor"]


class MessageIdInterceptor:
    """Producer interceptor adding ``kheaders.message.id`` (a fresh UUIDv7) where absent.

    >>> from kheaders import ProducerRecord
    >>> record = MessageIdInterceptor().on_send(ProducerRecord("t", b"v"))
    >>> len(record.headers.last_value("kheaders.message.id"))
    16
    >>> again = MessageIdInterceptor().on_send(record)
    >>> again.headers.values("kheaders.message.id") == record.headers.values("kheaders.message.id")
    True
    """

    __slots__ = ()

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        """Add a message id to ``record`` unless it has one."""
        headers = record.headers
        if MESSAGE_ID in headers:
            return record
        if headers.read_only:
            headers = record.headers = headers.copy()
        headers.add(MESSAGE_ID, uuid7_bytes())
        return record
