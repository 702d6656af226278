"""kheaders: Kafka record headers made first-class around confluent-kafka."""

from __future__ import annotations

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
from kheaders._serde import (
    CONTENT_TYPE,
    BytesDeserializer,
    BytesSerializer,
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    LongDeserializer,
    LongSerializer,
    StringDeserializer,
    StringSerializer,
)
from kheaders._serde_confluent import (
    FromConfluentDeserializer,
    FromConfluentSerializer,
    ToConfluentDeserializer,
    ToConfluentSerializer,
    from_confluent,
    to_confluent,
)
from kheaders._serde_json import (
    ContentTypeDeserializer,
    JsonDeserializer,
    JsonSerializer,
    media_type,
)
from kheaders._serde_protocols import Deserializer, Serializer

__version__ = "0.1.0"

__all__ = [
    "CONTENT_TYPE",
    "BrokerUnavailableError",
    "BytesDeserializer",
    "BytesSerializer",
    "ConfigurationError",
    "ContentTypeDeserializer",
    "DecodeError",
    "DeserializationError",
    "Deserializer",
    "DoubleDeserializer",
    "DoubleSerializer",
    "FromConfluentDeserializer",
    "FromConfluentSerializer",
    "Header",
    "HeaderLimitError",
    "HeaderTypes",
    "HeaderValue",
    "Headers",
    "IntegerDeserializer",
    "IntegerSerializer",
    "JsonDeserializer",
    "JsonSerializer",
    "KHeadersError",
    "LongDeserializer",
    "LongSerializer",
    "ProducerRecord",
    "ReadOnlyHeadersError",
    "RecordMetadata",
    "SerializationError",
    "Serializer",
    "StringDeserializer",
    "StringSerializer",
    "ToConfluentDeserializer",
    "ToConfluentSerializer",
    "__version__",
    "from_confluent",
    "media_type",
    "to_confluent",
]
