"""kheaders: Kafka record headers made first-class around confluent-kafka."""

from __future__ import annotations

from kheaders._chain import (
    Closeable,
    Configurable,
    InterceptorChain,
    OnAcknowledgement,
    OnCommit,
    OnConsume,
    OnSend,
)
from kheaders._consumer import Consumer, wrap_consumer
from kheaders._deadletter import DeadLetterPublisher, dead_letter_headers
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
from kheaders._producer import Producer, wrap_producer
from kheaders._records import ProducerRecord, RecordMetadata
from kheaders._serde_protocols import Deserializer, Serializer

__version__ = "0.1.0"

__all__ = [
    "BrokerUnavailableError",
    "Closeable",
    "Configurable",
    "ConfigurationError",
    "Consumer",
    "DeadLetterPublisher",
    "DecodeError",
    "DeserializationError",
    "Deserializer",
    "Header",
    "HeaderLimitError",
    "HeaderTypes",
    "HeaderValue",
    "Headers",
    "InterceptorChain",
    "KHeadersError",
    "OnAcknowledgement",
    "OnCommit",
    "OnConsume",
    "OnSend",
    "Producer",
    "ProducerRecord",
    "ReadOnlyHeadersError",
    "RecordMetadata",
    "SerializationError",
    "Serializer",
    "__version__",
    "dead_letter_headers",
    "wrap_consumer",
    "wrap_producer",
]
