"""Find or start a real Kafka-protocol broker (used by the tests, the CLI and the benchmarks)."""

from kheaders import _public
from kheaders.broker._apache import (
    KAFKA_VERSION,
    ApacheKafka,
    Listener,
    java_and_maven_missing,
    kafka_classpath,
)
from kheaders.broker._finder import (
    BOOTSTRAP_ENV,
    DEFAULT_KAFKA_IMAGE,
    Broker,
    DockerKafka,
    EmbeddedBroker,
    create_topic,
    docker_available,
    fast_consumer_config,
    find_or_start_broker,
    running_broker,
)
from kheaders.broker._net import free_port, wait_for_broker

__all__ = [
    "BOOTSTRAP_ENV",
    "DEFAULT_KAFKA_IMAGE",
    "KAFKA_VERSION",
    "ApacheKafka",
    "Broker",
    "DockerKafka",
    "EmbeddedBroker",
    "Listener",
    "create_topic",
    "docker_available",
    "fast_consumer_config",
    "find_or_start_broker",
    "free_port",
    "java_and_maven_missing",
    "kafka_classpath",
    "running_broker",
    "wait_for_broker",
]
_public.claim(__name__, globals())
