"""kheaders: Kafka record headers made first-class around confluent-kafka."""

# first: decides between the compiled core and its Python before any of its modules loads
from kheaders._compiled import COMPILED  # isort: skip
from kheaders import _public
from kheaders._client.chain import (
    Closeable,
    Configurable,
    InterceptorChain,
    OnAcknowledgement,
    OnCommit,
    OnConsume,
    OnSend,
)
from kheaders._client.consumer import Consumer, wrap_consumer
from kheaders._client.deadletter import DeadLetterPublisher, dead_letter_headers
from kheaders._client.producer import Producer, wrap_producer
from kheaders._client.records import ProducerRecord, RecordMetadata
from kheaders._codec.protocol import ValueCodec
from kheaders._codec.struct import TaggedStruct
from kheaders._codec.values import BOOL, JSON, LONG, TEXT, TEXT_LENIENT, UUID, VARLONG
from kheaders._errors import (
    BrokerUnavailableError,
    CloudEventError,
    ConfigurationError,
    DecodeError,
    DeserializationError,
    HeaderLimitError,
    HeldFailuresError,
    IntegrityError,
    InvalidNameError,
    KHeadersError,
    ProcessingError,
    ReadOnlyHeadersError,
    SerializationError,
    UnmirrorableRecordError,
)
from kheaders._logsetup import configure_logging
from kheaders._model.headers import Header, Headers, HeaderTypes, HeaderValue
from kheaders._model.limits import HeaderLimits
from kheaders._model.redact import (
    Redactor,
    is_sensitive,
    printable,
    render_headers,
    render_value,
)
from kheaders._model.traceparent import (
    TraceParent,
    extract_trace_parent,
    extract_trace_state,
    format_tracestate,
    parse_traceparent,
    parse_tracestate,
)
from kheaders._serde.builtin import (
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
from kheaders._serde.confluent import (
    FromConfluentDeserializer,
    FromConfluentSerializer,
    ToConfluentDeserializer,
    ToConfluentSerializer,
    from_confluent,
    to_confluent,
)
from kheaders._serde.json import (
    ContentTypeDeserializer,
    JsonDeserializer,
    JsonSerializer,
    media_type,
)
from kheaders._serde.protocols import Deserializer, SerializationContext, Serializer
from kheaders._settings import config_bool

__version__ = "0.1.0"

__all__ = [
    "BOOL",
    "COMPILED",
    "CONTENT_TYPE",
    "JSON",
    "LONG",
    "TEXT",
    "TEXT_LENIENT",
    "UUID",
    "VARLONG",
    "BrokerUnavailableError",
    "BytesDeserializer",
    "BytesSerializer",
    "Closeable",
    "CloudEventError",
    "Configurable",
    "ConfigurationError",
    "Consumer",
    "ContentTypeDeserializer",
    "DeadLetterPublisher",
    "DecodeError",
    "DeserializationError",
    "Deserializer",
    "DoubleDeserializer",
    "DoubleSerializer",
    "FromConfluentDeserializer",
    "FromConfluentSerializer",
    "Header",
    "HeaderLimitError",
    "HeaderLimits",
    "HeaderTypes",
    "HeaderValue",
    "Headers",
    "HeldFailuresError",
    "IntegerDeserializer",
    "IntegerSerializer",
    "IntegrityError",
    "InterceptorChain",
    "InvalidNameError",
    "JsonDeserializer",
    "JsonSerializer",
    "KHeadersError",
    "LongDeserializer",
    "LongSerializer",
    "OnAcknowledgement",
    "OnCommit",
    "OnConsume",
    "OnSend",
    "ProcessingError",
    "Producer",
    "ProducerRecord",
    "ReadOnlyHeadersError",
    "RecordMetadata",
    "Redactor",
    "SerializationContext",
    "SerializationError",
    "Serializer",
    "StringDeserializer",
    "StringSerializer",
    "TaggedStruct",
    "ToConfluentDeserializer",
    "ToConfluentSerializer",
    "TraceParent",
    "UnmirrorableRecordError",
    "ValueCodec",
    "__version__",
    "config_bool",
    "configure_logging",
    "dead_letter_headers",
    "extract_trace_parent",
    "extract_trace_state",
    "format_tracestate",
    "from_confluent",
    "is_sensitive",
    "media_type",
    "parse_traceparent",
    "parse_tracestate",
    "printable",
    "render_headers",
    "render_value",
    "to_confluent",
    "wrap_consumer",
    "wrap_producer",
]
_public.claim(__name__, globals())
