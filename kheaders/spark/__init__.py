"""Kafka for PySpark with headers: the ``kheaders`` data source (reads and writes like Spark's
``kafka`` format, through confluent-kafka), header column functions, KIP-280 compaction in
Spark SQL, and the pipeline job. Needs the ``spark`` extra (pyspark, pyarrow)."""

try:
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "kheaders.spark needs pyspark and pyarrow: pip install 'kheaders[spark]'"
    ) from exc

from kheaders import _public
from kheaders.spark._arrow import HEADERS_TYPE, arrow_schema, kafka_schema
from kheaders.spark._cloudevents import (
    cloudevent_attribute,
    cloudevent_columns,
    cloudevent_time,
    register_cloudevent_functions,
)
from kheaders.spark._cluster import check_workers
from kheaders.spark._compact import compact
from kheaders.spark._errors import (
    DataLossError,
    DeliveryError,
    TopicNotFoundError,
    WorkerSetupError,
)
from kheaders.spark._functions import (
    header_last,
    header_long,
    header_text,
    header_values,
    header_varlong,
    headers_to_map,
    parent_span_id,
    set_header,
    trace_id,
    with_header,
)
from kheaders.spark._options import DEFAULT_PARTITIONER
from kheaders.spark._session import prepare_local_spark
from kheaders.spark._source import (
    KafkaDataSource,
    kafka_connector_available,
    kafka_reader,
    kafka_writer,
    read_kafka,
    register,
)
from kheaders.spark._sql import register_functions

__all__ = [
    "DEFAULT_PARTITIONER",
    "HEADERS_TYPE",
    "DataLossError",
    "DeliveryError",
    "KafkaDataSource",
    "TopicNotFoundError",
    "WorkerSetupError",
    "arrow_schema",
    "check_workers",
    "cloudevent_attribute",
    "cloudevent_columns",
    "cloudevent_time",
    "compact",
    "header_last",
    "header_long",
    "header_text",
    "header_values",
    "header_varlong",
    "headers_to_map",
    "kafka_connector_available",
    "kafka_reader",
    "kafka_schema",
    "kafka_writer",
    "parent_span_id",
    "prepare_local_spark",
    "read_kafka",
    "register",
    "register_cloudevent_functions",
    "register_functions",
    "set_header",
    "trace_id",
    "with_header",
]
_public.claim(__name__, globals())
