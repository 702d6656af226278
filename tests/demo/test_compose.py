"""docker-compose.yml: its structure always; the whole stack where a Docker engine answers."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from kheaders.broker import DEFAULT_KAFKA_IMAGE, docker_available, free_port
from kheaders.demo import NOTIFICATIONS_TOPIC

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
SERVICES = ("orders", "shipping", "notifications", "audit")


def _load_compose() -> dict[str, object] | None:
    try:
        import yaml  # PyYAML is not a kheaders dependency: structure is checked if present
    except ImportError:
        return None
    loaded = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_compose_file_declares_kafka_kraft_jaeger_and_the_services() -> None:
    text = COMPOSE.read_text()
    for needed in (
        "image: apache/kafka:",
        "KAFKA_PROCESS_ROLES: broker,controller",
        "INTERNAL://kafka:9092",
        "EXTERNAL://localhost:${KAFKA_HOST_PORT:-9094}",
        "image: jaegertracing/jaeger:2.",
        "JAEGER_LISTEN_HOST: 0.0.0.0",
        ":16686",
        "KHEADERS_BOOTSTRAP: kafka:9092",
        "OTEL_EXPORTER_OTLP_ENDPOINT: http://otel-collector:4317",
        "image: otel/opentelemetry-collector-contrib:",
        "image: prom/prometheus:",
        "condition: service_healthy",
    ):
        assert needed in text, needed
    for name in SERVICES:
        assert f'command: ["python", "-m", "examples.{name}"' in text
        assert (ROOT / "examples" / f"{name}.py").is_file()
    compose = _load_compose()
    if compose is None:
        return  # no PyYAML here: the text checks above are what can be checked
    services = compose["services"]
    assert isinstance(services, dict)
    assert set(services) == {"kafka", "jaeger", "otel-collector", "prometheus", *SERVICES}
    kafka = services["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    assert "healthcheck" in kafka
    assert "broker,controller" in kafka["environment"]["KAFKA_PROCESS_ROLES"]
    assert any(str(p).endswith(":16686") for p in services["jaeger"]["ports"])
    for name in SERVICES:
        service = services[name]
        assert service["build"] == "."
        assert service["command"][:3] == ["python", "-m", f"examples.{name}"]
        assert service["environment"]["KHEADERS_BOOTSTRAP"] == "kafka:9092"
        assert service["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == (
            "http://otel-collector:4317"
        )
        assert service["depends_on"]["kafka"]["condition"] == "service_healthy"
        assert "otel-collector" in service["depends_on"]


def test_compose_runs_apache_kafka_4_1_in_kraft_mode_with_a_4_x_config() -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML (dev extra) parses the compose files")
    compose = yaml.safe_load(COMPOSE.read_text())
    kafka = compose["services"]["kafka"]
    version = kafka["image"].removeprefix("apache/kafka:")
    assert version.split(".")[:2] == ["4", "1"], kafka["image"]
    assert kafka["image"] == DEFAULT_KAFKA_IMAGE  # testcontainers' broker: the same Kafka
    env = kafka["environment"]
    assert not any("ZOOKEEPER" in key for key in env)  # Kafka 4 has KRaft only
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == "1@kafka:9093"
    assert env["KAFKA_CONTROLLER_LISTENER_NAMES"] == "CONTROLLER"
    assert "CONTROLLER://:9093" in env["KAFKA_LISTENERS"]
    for single_node in ("OFFSETS_TOPIC", "TRANSACTION_STATE_LOG", "SHARE_COORDINATOR_STATE_TOPIC"):
        assert env[f"KAFKA_{single_node}_REPLICATION_FACTOR"] == "1"


def test_compose_runs_the_asyncio_notifications_service_and_audits_its_hop() -> None:
    """The services `kheaders demo` runs: the asyncio notifications service among them, and
    the audit of its hop (shipments -> notifications)."""
    yaml = pytest.importorskip("yaml", reason="PyYAML (dev extra) parses the compose files")
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    notifications = services["notifications"]
    assert notifications["command"] == ["python", "-m", "examples.notifications"]
    assert notifications["depends_on"]["kafka"]["condition"] == "service_healthy"
    audit = services["audit"]["command"]
    assert audit[audit.index("--notifications-topic") + 1] == NOTIFICATIONS_TOPIC


def _mounted(service: dict[str, object], target: str) -> Path:
    """The host file ``service`` mounts at ``target`` (read-only), which must exist."""
    volumes = service["volumes"]
    assert isinstance(volumes, list)
    found = [v for v in volumes if str(v).split(":")[1] == target]
    assert len(found) == 1, (volumes, target)
    source, _, mode = str(found[0]).partition(":" + target)
    assert mode == ":ro"
    path = ROOT / source
    assert path.is_file(), path
    return path


def test_collector_receives_otlp_and_sends_traces_to_jaeger_and_metrics_to_prometheus() -> None:
    """The metrics path: services -> collector (OTLP) -> Prometheus endpoint <- Prometheus.

    Structure only: no Docker engine answers on the machines this was written on, so the
    stack itself was not run (test_compose_stack_runs... checks it where one does).
    """
    yaml = pytest.importorskip("yaml", reason="PyYAML (dev extra) parses the compose files")
    compose = _load_compose()
    assert compose is not None
    services = compose["services"]
    assert isinstance(services, dict)
    collector = services["otel-collector"]
    assert collector["image"].startswith("otel/opentelemetry-collector-contrib:")
    config_path = _mounted(collector, "/etc/otelcol-contrib/config.yaml")
    assert collector["command"] == ["--config=/etc/otelcol-contrib/config.yaml"]
    assert any(str(p).endswith(":4317") for p in collector["ports"])
    assert any(str(p).endswith(":8889") for p in collector["ports"])
    assert "4317" not in " ".join(str(p) for p in services["jaeger"]["ports"])  # collector's now

    config = yaml.safe_load(config_path.read_text())
    assert config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"] == "0.0.0.0:4317"
    jaeger = config["exporters"]["otlp/jaeger"]
    assert jaeger["endpoint"] == "jaeger:4317"
    assert jaeger["tls"]["insecure"] is True
    assert config["exporters"]["prometheus"]["endpoint"] == "0.0.0.0:8889"
    pipelines = config["service"]["pipelines"]
    assert pipelines["traces"]["receivers"] == ["otlp"]
    assert pipelines["traces"]["exporters"] == ["otlp/jaeger"]
    assert pipelines["metrics"]["receivers"] == ["otlp"]
    assert "prometheus" in pipelines["metrics"]["exporters"]
    for pipeline in pipelines.values():  # every component a pipeline names is declared
        for kind in ("receivers", "processors", "exporters"):
            for name in pipeline.get(kind, []):
                assert name in config[kind], (kind, name)

    prometheus = services["prometheus"]
    assert prometheus["image"].startswith("prom/prometheus:")
    scrape = yaml.safe_load(_mounted(prometheus, "/etc/prometheus/prometheus.yml").read_text())
    targets = [
        t for job in scrape["scrape_configs"] for c in job["static_configs"] for t in c["targets"]
    ]
    assert targets == ["otel-collector:8889"]
    assert any(str(p).endswith(":9090") for p in prometheus["ports"])


def test_dockerfile_builds_the_services_with_the_otlp_exporter() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert text.startswith("#")
    assert "FROM python:3.11-slim" in text
    assert "pip install . opentelemetry-sdk opentelemetry-exporter-otlp" in text
    assert "COPY examples ./examples" in text
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".git" in ignored
    assert ".venv" in ignored


def _compose_cli() -> list[str] | None:
    for cli in (["docker", "compose"], ["docker-compose"]):
        if shutil.which(cli[0]) is None:
            continue
        probe = subprocess.run([*cli, "version"], capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            return cli
    return None


def _jaeger_services(port: int) -> set[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/services", timeout=5) as resp:
        return set(json.load(resp).get("data") or [])


@pytest.mark.docker
def test_compose_stack_runs_the_services_and_the_audit_is_clean() -> None:
    if not docker_available():
        pytest.skip("no Docker engine answers here (kheaders.broker.docker_available() is False)")
    cli = _compose_cli()
    if cli is None:
        pytest.skip("Docker answers but neither `docker compose` nor `docker-compose` is installed")
    ui_port = free_port()
    metrics_port = free_port()
    env = {
        **os.environ,
        "DEMO_ORDERS": "30",
        "KAFKA_HOST_PORT": str(free_port()),
        "JAEGER_UI_PORT": str(ui_port),
        "OTLP_GRPC_PORT": str(free_port()),
        "COLLECTOR_METRICS_PORT": str(metrics_port),
        "PROMETHEUS_PORT": str(free_port()),
    }
    base = [*cli, "-f", str(COMPOSE), "-p", f"kheaders-test-{uuid.uuid4().hex[:8]}"]

    def compose(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    try:
        up = compose("up", "-d", "--build")
        assert up.returncode == 0, up.stdout + up.stderr
        container = compose("ps", "-a", "-q", "audit").stdout.strip()
        assert container, "the audit container was not created"
        waited = subprocess.run(
            ["docker", "wait", container], capture_output=True, text=True, timeout=600, check=False
        )
        logs = compose("logs", "--no-color", *SERVICES).stdout
        assert waited.stdout.strip() == "0", logs
        assert "records in (orders): 30  records out (shipments): 30  expected: 30" in logs
        assert "complete across both hops: 30  problems: 0" in logs
        assert "client ids per trace: orders-service -> shipping-service" in logs
        assert "client ids per trace: shipping-service -> notification-service" in logs
        assert logs.count("RESULT: OK") == 2
        deadline = time.monotonic() + 60
        seen: set[str] = set()
        while time.monotonic() < deadline and not {"orders-service", "shipping-service"} <= seen:
            with contextlib.suppress(OSError):
                seen = _jaeger_services(ui_port)
            time.sleep(2)
        assert {"orders-service", "shipping-service"} <= seen, seen
        # the metrics reached the collector's Prometheus endpoint
        exposition = ""
        deadline = time.monotonic() + 60
        while (
            time.monotonic() < deadline and "messaging_client_consumed_messages" not in exposition
        ):
            with contextlib.suppress(OSError):
                url = f"http://127.0.0.1:{metrics_port}/metrics"
                with urllib.request.urlopen(url, timeout=5) as resp:
                    exposition = resp.read().decode()
            time.sleep(2)
        assert "messaging_client_sent_messages" in exposition, exposition[-2000:]
        assert "messaging_client_consumed_messages" in exposition
        assert "messaging_client_operation_duration" in exposition
    finally:
        compose("down", "-v", "--remove-orphans", timeout=300)


def test_readme_says_where_compose_is_described_that_it_was_not_run_here() -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("`docker compose up` starts")
    paragraph = readme[start : readme.index("\n\n", start)]
    assert "Apache Kafka 4.1" in paragraph
    assert "notification" in paragraph
    assert "no Docker engine" in paragraph
