"""Apache Kafka itself as a local broker: KRaft combined mode, jars resolved by Maven.

The reference broker for the integration tests and the benchmarks (the embedded Tansu broker
stays what ``kheaders demo`` and ``kheaders broker`` start). It needs a Java 17+ runtime and
Maven on ``PATH``; the broker's jars come from Maven Central into the local Maven repository
the first time (a pom written to ``~/.cache/kheaders``), so later starts are offline.

One process is both controller and broker (``process.roles=broker,controller``), listening on
free loopback ports; its storage is formatted with a cluster id of its own at the first start
and kept across :meth:`ApacheKafka.restart` (what a durability test needs), removed by
:meth:`ApacheKafka.stop` unless the caller gave the directory.

>>> with ApacheKafka() as kafka:  # doctest: +SKIP
...     print(kafka.bootstrap)
127.0.0.1:40123
"""

from __future__ import annotations

import base64
import fcntl
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kheaders._errors import BrokerUnavailableError
from kheaders.broker._net import free_port, halt, wait_for_broker, wait_listening

KAFKA_VERSION = "4.4.0"
"""The Apache Kafka release started by :class:`ApacheKafka` (share groups are GA from 4.2)."""

_SLF4J_VERSION = "2.0.17"

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>kheaders.local</groupId>
  <artifactId>apache-kafka-broker</artifactId>
  <version>{kafka}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>{kafka}</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-api</artifactId>
      <version>{slf4j}</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-simple</artifactId>
      <version>{slf4j}</version>
    </dependency>
  </dependencies>
</project>
"""

# Settings that make a one-node test cluster quick to use; a caller's ``properties`` win.
# ``group.min.session.timeout.ms``: Kafka's floor is 6 s and a join below it fails with
# INVALID_SESSION_TIMEOUT (Tansu takes any); tests of session expiry and crashed members use
# 1-3 s sessions, so this broker allows sessions down to 1 s.
# ``log.retention.ms=-1``: the tests write records stamped in 2023 (fixed timestamps make
# fixed expectations); with Kafka's default 7-day retention the broker's periodic check
# (every 5 min) deletes them mid-run and readers are reset to the log end. Tansu never
# deleted anything. A test about retention sets ``retention.ms`` on its own topic.
_DEFAULTS: dict[str, str] = {
    "group.min.session.timeout.ms": "1000",
    "log.retention.ms": "-1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "4",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "share.coordinator.state.topic.num.partitions": "4",
    "group.share.heartbeat.interval.ms": "500",
    "group.share.min.heartbeat.interval.ms": "500",
    "group.share.min.record.lock.duration.ms": "1000",
    "group.initial.rebalance.delay.ms": "0",
    "num.partitions": "1",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "log.flush.interval.messages": "9223372036854775807",
    "auto.create.topics.enable": "true",
}

_JVM_OPTIONS = (
    "-Xms256m",
    "-Xmx1g",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-Djava.awt.headless=true",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.logFile=System.out",
)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kheaders" / f"apache-kafka-{KAFKA_VERSION}"


def java_and_maven_missing() -> str | None:
    """None when ``java`` and ``mvn`` are on PATH, else a sentence naming what is missing."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if not missing:
        return None
    return f"Apache Kafka needs Java 17+ and Maven on PATH: {' and '.join(missing)} not found"


def kafka_classpath(*, timeout: float = 900.0) -> str:
    """The broker's classpath (jar paths joined by ``:``), resolved by Maven once and cached.

    Concurrent callers (two test processes) wait on a file lock instead of racing Maven.
    Raises BrokerUnavailableError when Java or Maven is missing or resolution fails.
    """
    missing = java_and_maven_missing()
    if missing is not None:
        raise BrokerUnavailableError(missing)
    cache = _cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    listing = cache / "classpath.txt"
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if listing.exists():
            cached = listing.read_text().strip()
            if cached and all(Path(jar).exists() for jar in cached.split(os.pathsep)):
                return cached
        (cache / "pom.xml").write_text(_POM.format(kafka=KAFKA_VERSION, slf4j=_SLF4J_VERSION))
        partial = cache / "classpath.partial"
        result = subprocess.run(
            [
                "mvn",
                "-q",
                "-B",
                "-f",
                str(cache / "pom.xml"),
                "dependency:build-classpath",
                f"-Dmdep.outputFile={partial}",
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0 or not partial.exists():
            raise BrokerUnavailableError(
                f"Maven could not resolve org.apache.kafka:kafka_2.13:{KAFKA_VERSION}: "
                + (result.stdout + result.stderr)[-2000:]
            )
        partial.replace(listing)
        return listing.read_text().strip()


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, base64url without padding (22 characters), never
    starting with ``-`` (Kafka's storage tool would read such an id as an option; Kafka's own
    ``Uuid.randomUuid`` draws again for the same reason)."""
    while True:
        ident = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode("ascii").rstrip("=")
        if not ident.startswith("-"):
            return ident


@dataclass(frozen=True)
class Listener:
    """An extra client listener: ``name`` (e.g. ``SSL``, ``SASL_SSL``), its security
    ``protocol`` and its loopback ``port`` (0: a free one, chosen at construction)."""

    name: str
    protocol: str
    port: int = 0


class ApacheKafka:
    """One Apache Kafka node (controller and broker in one JVM) on loopback.

    ``advertised_port`` (default ``port``) is the port the PLAINTEXT listener names in
    metadata, to put a fault proxy between clients and the broker. ``listeners`` adds client
    listeners (TLS, SASL) whose settings go in ``properties``; ``scram_users`` maps user names
    to passwords created as SCRAM-SHA-256 and SCRAM-SHA-512 credentials when the storage is
    formatted. ``cluster_id`` defaults to a fresh one, so two instances are two clusters.
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        advertised_port: int | None = None,
        cluster_id: str | None = None,
        listeners: Sequence[Listener] = (),
        properties: Mapping[str, str] | None = None,
        scram_users: Mapping[str, str] | None = None,
        data_dir: str | None = None,
    ) -> None:
        self.port = port or free_port()
        self.advertised_port = advertised_port or self.port
        self.controller_port = free_port()
        self.cluster_id = cluster_id or new_cluster_id()
        self.listeners = tuple(
            listener if listener.port else Listener(listener.name, listener.protocol, free_port())
            for listener in listeners
        )
        self._properties = dict(properties or {})
        self._scram_users = dict(scram_users or {})
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="kheaders-kafka-"))
        self._formatted = (self.data_dir / "log" / "meta.properties").exists()
        self._process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the broker)

    @property
    def bootstrap(self) -> str:
        """``127.0.0.1:PORT`` of the PLAINTEXT listener."""
        return f"127.0.0.1:{self.port}"

    @property
    def advertised(self) -> str:
        """``127.0.0.1:ADVERTISED_PORT``: the address the PLAINTEXT listener names."""
        return f"127.0.0.1:{self.advertised_port}"

    def address(self, listener_name: str) -> str:
        """``127.0.0.1:PORT`` of the extra listener called ``listener_name``."""
        for listener in self.listeners:
            if listener.name == listener_name:
                return f"127.0.0.1:{listener.port}"
        raise KeyError(listener_name)

    @property
    def running(self) -> bool:
        """True while the JVM is alive."""
        return self._process is not None and self._process.poll() is None

    def _server_properties(self) -> dict[str, str]:
        protocols = ["PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT"] + [
            f"{listener.name}:{listener.protocol}" for listener in self.listeners
        ]
        listen = [f"PLAINTEXT://127.0.0.1:{self.port}"] + [
            f"{listener.name}://127.0.0.1:{listener.port}" for listener in self.listeners
        ]
        advertise = [f"PLAINTEXT://127.0.0.1:{self.advertised_port}"] + [
            f"{listener.name}://127.0.0.1:{listener.port}" for listener in self.listeners
        ]
        settings = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listeners": ",".join([*listen, f"CONTROLLER://127.0.0.1:{self.controller_port}"]),
            "advertised.listeners": ",".join(advertise),
            "listener.security.protocol.map": ",".join(protocols),
            "log.dirs": str(self.data_dir / "log"),
            **_DEFAULTS,
            **self._properties,
        }
        return settings

    def _write_properties(self) -> Path:
        path = self.data_dir / "server.properties"
        lines = [f"{key}={_escape(value)}" for key, value in self._server_properties().items()]
        path.write_text("\n".join(lines) + "\n")
        return path

    def _java(self, classpath: str, *args: str) -> list[str]:
        return ["java", *_JVM_OPTIONS, "-cp", classpath, *args]

    def _format(self, classpath: str, config: Path, timeout: float) -> None:
        scram: list[str] = []
        for user, password in self._scram_users.items():
            for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                scram += ["--add-scram", f"{mechanism}=[name={user},password={password}]"]
        result = subprocess.run(
            self._java(
                classpath,
                "kafka.tools.StorageTool",
                "format",
                "--ignore-formatted",
                "-t",
                self.cluster_id,
                "-c",
                str(config),
                *scram,
            ),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            output = (result.stdout + result.stderr).decode("utf-8", "replace")
            for password in self._scram_users.values():
                output = output.replace(password, "***")
            raise BrokerUnavailableError(f"formatting Kafka storage failed: {output[-2000:]}")
        self._formatted = True

    def start(self, timeout: float = 120.0) -> ApacheKafka:
        """Format the storage (first start only), start the JVM, wait until it answers.

        Raises BrokerUnavailableError, with the broker's last output, when it exits or does
        not answer a metadata request within ``timeout`` seconds.
        """
        if self.running:
            return self
        classpath = kafka_classpath()
        config = self._write_properties()
        if not self._formatted:
            self._format(classpath, config, timeout)
        self._log.seek(0)
        self._log.truncate()
        self._process = subprocess.Popen(
            self._java(classpath, "kafka.Kafka", str(config)),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        try:
            wait_listening(self._process, self.port, deadline, "Apache Kafka")
            wait_for_broker(self.bootstrap, max(1.0, deadline - time.monotonic()))
        except BrokerUnavailableError:
            output = self.output()
            self.stop()
            raise BrokerUnavailableError(
                f"Apache Kafka did not start on {self.bootstrap}: {output[-3000:]}"
            ) from None
        return self

    def output(self) -> str:
        """What the JVM printed (warnings and errors) since its last start."""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def _halt(self, *, graceful: bool, timeout: float) -> None:
        process, self._process = self._process, None
        halt(process, graceful=graceful, timeout=timeout)

    def kill(self) -> None:
        """SIGKILL the JVM, as a crash would; the storage stays for :meth:`start`."""
        self._halt(graceful=False, timeout=30.0)

    def restart(self, timeout: float = 120.0) -> ApacheKafka:
        """Stop (gracefully) and start again on the same ports with the same storage."""
        self._halt(graceful=True, timeout=60.0)
        return self.start(timeout)

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the JVM (SIGTERM, then SIGKILL) and remove the storage it was given none of."""
        self._halt(graceful=True, timeout=timeout)
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self._formatted = False

    def __enter__(self) -> ApacheKafka:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _escape(value: str) -> str:
    """A value as Java's ``Properties.load`` reads it back unchanged."""
    out = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return "\\" + out if out.startswith((" ", "\t")) else out
