"""docs/clients.md: its runnable example stays true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kheaders.broker import BOOTSTRAP_ENV

DOC = Path(__file__).resolve().parents[2] / "docs" / "clients.md"


@pytest.mark.integration
def test_first_example_of_clients_doc_runs(monkeypatch: pytest.MonkeyPatch, bootstrap: str) -> None:
    monkeypatch.setenv(BOOTSTRAP_ENV, bootstrap)  # the example's running_broker() reuses ours
    code = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[0]
    exec(compile(code, str(DOC), "exec"), {"__name__": "clients_doc"})


def test_wrapping_with_a_config_example_configures_the_named_interceptor() -> None:
    import confluent_kafka

    from kheaders.interceptors.tracing import TracingProducerInterceptor

    block = next(
        code
        for code in re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
        if "wrap_producer(existing, config=" in code
    )
    existing = confluent_kafka.Producer({"bootstrap.servers": "127.0.0.1:9", "log_level": 0})
    scope: dict[str, object] = {"kheaders": __import__("kheaders"), "existing": existing}
    exec(compile(block, str(DOC), "exec"), scope)
    producer = scope["producer"]
    (tracing,) = producer.interceptors.interceptors  # type: ignore[attr-defined]
    assert isinstance(tracing, TracingProducerInterceptor)
    assert tracing._client_id == "orders-service"  # configure() read the wrapped client's id
    assert producer.close(timeout=0)  # type: ignore[attr-defined]
