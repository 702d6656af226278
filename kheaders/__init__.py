"""kheaders: Kafka record headers made first-class around confluent-kafka."""

from __future__ import annotations

from kheaders._codec import ValueCodec
from kheaders._errors import (
    BrokerUnavailableError,
    ConfigurationError,
    DecodeError,
    DeserializationError,
    HeaderLimitError,
    KHeadersError,
    ReadOnlyHeadersError,
    SerializationError,
)
from kheaders._headers import Header, Headers, HeaderTypes, HeaderValue
from kheaders._records import ProducerRecord, RecordMetadata
from kheaders._serde_protocols import Deserializer, Serializer
from kheaders._struct import TaggedStruct
from kheaders._values import BOOL, JSON, LONG, TEXT, TEXT_LENIENT, UUID, VARLONG

__version__ = "0.1.0"

__all__ = [
    "BOOL",
    "JSON",
    "LONG",
    "TEXT",
    "TEXT_LENIENT",
    "UUID",
    "VARLONG",
    "BrokerUnavailableError",
    "ConfigurationError",
    "DecodeError",
    "DeserializationError",
    "Deserializer",
    "Header",
    "HeaderLimitError",
    "HeaderTypes",
    "HeaderValue",
    "Headers",
    "KHeadersError",
    "ProducerRecord",
    "ReadOnlyHeadersError",
    "RecordMetadata",
    "SerializationError",
    "Serializer",
    "TaggedStruct",
    "ValueCodec",
    "__version__",
]
