"""kheaders: Kafka record headers made first-class around confluent-kafka."""

# first: decides between the compiled core and its Python before any of its modules loads
from kheaders._compiled import COMPILED  # isort: skip
from kheaders import _public
from kheaders._client.consumer import (
    Consumer,
    wrap_consumer,
)
from kheaders._client.producer import (
    Producer,
    wrap_producer,
)
from kheaders._client.records import (
    ProducerRecord,
    RecordMetadata,
)
from kheaders._client.share import (
    ShareConsumer,
    wrap_share_consumer,
)
from kheaders._codec.protocol import ValueCodec
from kheaders._codec.struct import TaggedStruct
from kheaders._codec.values import (
    BOOL,
    JSON,
    LONG,
    TEXT,
    TEXT_LENIENT,
    UUID,
    VARLONG,
)
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
from kheaders._model.headers import (
    Header,
    Headers,
    HeaderTypes,
    HeaderValue,
)
from kheaders._model.limits import HeaderLimits
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
from kheaders._serde.protocols import (
    Deserializer,
    SerializationContext,
    Serializer,
)
from kheaders._settings import config_bool

# the public modules of moved names: imported here so that their classes name them at once
from kheaders import hooks as hooks  # isort: skip
from kheaders import redaction as redaction  # isort: skip
from kheaders import tracecontext as tracecontext  # isort: skip

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
    "CloudEventError",
    "ConfigurationError",
    "Consumer",
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
    "HeaderLimits",
    "HeaderTypes",
    "HeaderValue",
    "Headers",
    "HeldFailuresError",
    "IntegerDeserializer",
    "IntegerSerializer",
    "IntegrityError",
    "InvalidNameError",
    "JsonDeserializer",
    "JsonSerializer",
    "KHeadersError",
    "LongDeserializer",
    "LongSerializer",
    "ProcessingError",
    "Producer",
    "ProducerRecord",
    "ReadOnlyHeadersError",
    "RecordMetadata",
    "SerializationContext",
    "SerializationError",
    "Serializer",
    "ShareConsumer",
    "StringDeserializer",
    "StringSerializer",
    "TaggedStruct",
    "ToConfluentDeserializer",
    "ToConfluentSerializer",
    "UnmirrorableRecordError",
    "ValueCodec",
    "__version__",
    "config_bool",
    "configure_logging",
    "from_confluent",
    "media_type",
    "to_confluent",
    "wrap_consumer",
    "wrap_producer",
    "wrap_share_consumer",
]
_public.claim(__name__, globals())

# Names that moved to their own public modules in 0.2; the old ones warn for one release.
__getattr__ = _public.moved(
    __name__,
    {
        "DeadLetterPublisher": "kheaders.deadletter.DeadLetterPublisher",
        "dead_letter_headers": "kheaders.deadletter.dead_letter_headers",
        "Closeable": "kheaders.hooks.Closeable",
        "Configurable": "kheaders.hooks.Configurable",
        "InterceptorChain": "kheaders.hooks.InterceptorChain",
        "OnAcknowledgement": "kheaders.hooks.OnAcknowledgement",
        "OnCommit": "kheaders.hooks.OnCommit",
        "OnConsume": "kheaders.hooks.OnConsume",
        "OnSend": "kheaders.hooks.OnSend",
        "Redactor": "kheaders.redaction.Redactor",
        "is_sensitive": "kheaders.redaction.is_sensitive",
        "printable": "kheaders.redaction.printable",
        "render_headers": "kheaders.redaction.render_headers",
        "render_value": "kheaders.redaction.render_value",
        "TraceParent": "kheaders.tracecontext.TraceParent",
        "extract_trace_parent": "kheaders.tracecontext.extract_trace_parent",
        "extract_trace_state": "kheaders.tracecontext.extract_trace_state",
        "format_tracestate": "kheaders.tracecontext.format_tracestate",
        "parse_traceparent": "kheaders.tracecontext.parse_traceparent",
        "parse_tracestate": "kheaders.tracecontext.parse_tracestate",
    },
    since="0.2",
)
