"""Errors of the Spark source and sink (leaves of the kheaders exception tree)."""

from __future__ import annotations

from kheaders._errors import ConfigurationError, KHeadersError


class DataLossError(KHeadersError, RuntimeError):
    """Offsets a query needs are no longer in the log; ``failOnDataLoss=false`` skips them."""


class DeliveryError(KHeadersError, RuntimeError):
    """A write task could not deliver every record to Kafka; the task (and query) fails."""


class TopicNotFoundError(ConfigurationError):
    """A topic (or partition) the read names does not exist; the message names it."""


class WorkerSetupError(KHeadersError, RuntimeError):
    """Spark's Python workers cannot import kheaders (or confluent-kafka, pyarrow)."""
