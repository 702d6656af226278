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
from kheaders._redact import Redactor, is_sensitive, render_headers
from kheaders._serde_protocols import Deserializer, Serializer
from kheaders._traceparent import (
    TraceParent,
    extract_trace_parent,
    extract_trace_state,
    format_tracestate,
    parse_traceparent,
    parse_tracestate,
)

__version__ = "0.1.0"

__all__ = [
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
    "Redactor",
    "SerializationError",
    "Serializer",
    "TraceParent",
    "__version__",
    "extract_trace_parent",
    "extract_trace_state",
    "format_tracestate",
    "is_sensitive",
    "parse_traceparent",
    "parse_tracestate",
    "render_headers",
]
