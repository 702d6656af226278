"""Security: nothing sensitive leaks into logs, header JSON stays plain data, trace context
from records is untrusted, and the dependency set is audited."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from typing import Any

import pytest
from confluent_kafka import TopicPartition
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from structlog.testing import capture_logs

from kheaders import JSON, Consumer, DecodeError, Headers, Producer
from kheaders.interceptors.logging import LoggingInterceptor
from kheaders.interceptors.tracing import process_span
from kheaders.redaction import render_headers

SECRETS = {
    "Authorization": b"Bearer s3cr3t-AAAA",
    "X-Api-Key": b"s3cr3t-BBBB",
    "db_password": b"s3cr3t-CCCC",
    "session-token": b"\xffs3cr3t-DDDD",  # binary: must not leak as hex either
    "Cookie": b"sid=s3cr3t-EEEE",
}


def _leaks(events: list[dict[str, Any]]) -> list[str]:
    text = json.dumps(events, default=repr)
    found = [s for s in ("s3cr3t", b"s3cr3t".hex()) if s in text]
    return found


@pytest.mark.integration
def test_logging_interceptor_never_logs_a_secret_header_end_to_end(
    bootstrap: str, topic: str
) -> None:
    headers = [*SECRETS.items(), ("trace", b"visible")]
    with capture_logs() as events:
        producer = Producer(
            {"bootstrap.servers": bootstrap}, interceptors=[LoggingInterceptor("info")]
        )
        producer.produce(topic, b"v", headers=headers)
        assert producer.flush(10) == 0
        consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "sec"},
            interceptors=[LoggingInterceptor("info")],
        )
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 10
        msg = None
        while msg is None and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
        consumer.close()
    assert msg is not None
    assert msg.headers().last_value("X-Api-Key") == SECRETS["X-Api-Key"]  # data is intact
    assert len(events) >= 3  # send, ack, consume
    assert "visible" in json.dumps(events, default=repr)
    assert _leaks(events) == []


def test_render_headers_redacts_every_sensitive_form() -> None:
    rendered = render_headers(list(SECRETS.items()))
    assert [text for _, text in rendered] == ["<redacted>"] * len(SECRETS)
    assert _leaks([dict(rendered)]) == []


@pytest.mark.parametrize(
    "payload",
    [
        b'{"__class__": "os.system", "args": ["rm -rf /"]}',
        b'{"@type": "java.lang.Runtime", "val": 1}',
        b'{"py/object": "subprocess.Popen", "py/reduce": []}',
        b'{"$type": "System.IO.File", "__reduce__": "x"}',
    ],
)
def test_json_header_values_decode_to_plain_json_only(payload: bytes) -> None:
    value = JSON.decode(payload)
    assert type(value) is dict
    assert value == json.loads(payload)
    assert all(type(v) in (str, int, list, dict) for v in value.values())


@pytest.mark.parametrize(
    "payload",
    [b"[" * 100_000 + b"]" * 100_000, b"9" * 5000, b"NaN", b'{"a": Infinity}', b"\xff"],
)
def test_hostile_json_gives_decode_error_only(payload: bytes) -> None:
    with pytest.raises(DecodeError):
        JSON.decode(payload)


def test_link_only_tracing_never_adopts_a_records_trace_context() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    from confluent_kafka import Message

    forged = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    msg = Message(topic="t", partition=0, offset=1, key=b"k", value=b"v")
    msg.set_headers(Headers([("traceparent", forged), ("baggage", "role=admin")]).close())  # type: ignore[arg-type]
    with process_span(msg, link_only=True, tracer_provider=provider):
        pass
    with process_span(msg, tracer_provider=provider):
        pass
    linked, adopted = exporter.get_finished_spans()
    assert linked.context.trace_id != 0x0AF7651916CD43DD8448EB211C80319C
    assert linked.parent is None
    assert [link.context.span_id for link in linked.links] == [0xB7AD6B7169203331]
    assert adopted.context.trace_id == 0x0AF7651916CD43DD8448EB211C80319C  # default: parent


@pytest.mark.parametrize(
    "value",
    [b"00-" + b"f" * 32 + b"-" + b"f" * 16 + b"-01" + b"x" * 10_000, b"\x00" * 55, "\udcff" * 60],
)
def test_garbage_traceparent_starts_a_new_trace_without_error(value: bytes | str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    from confluent_kafka import Message

    msg = Message(topic="t", partition=0, offset=1, key=b"k", value=b"v")
    raw = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value
    msg.set_headers(Headers([("traceparent", raw)]).close())  # type: ignore[arg-type]
    with process_span(msg, tracer_provider=provider):
        pass
    (span,) = exporter.get_finished_spans()
    assert span.parent is None


def test_pip_audit_finds_no_known_vulnerability_in_the_installed_environment() -> None:
    """Runs pip-audit over this environment; unreachable vulnerability service = skip, said so."""
    version = subprocess.run(
        [sys.executable, "-m", "pip_audit", "--version"], capture_output=True, check=False
    )
    if shutil.which("pip-audit") is None and version.returncode != 0:
        pytest.fail("pip-audit is in the dev extra and must be installed")
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip_audit",
                "--local",
                "--progress-spinner",
                "off",
                "--format",
                "json",
                "--timeout",
                "15",
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(
            "pip-audit did not finish in 180 s: the vulnerability service is unreachable here"
        )
    report = result.stdout.strip()
    print(f"\npip-audit exit {result.returncode}\n{result.stderr[-3000:]}\n{report[:3000]}")
    try:
        data = json.loads(report)
    except json.JSONDecodeError:
        pytest.skip(
            "pip-audit could not audit (vulnerability service unreachable?):"
            f" {result.stderr[-500:]}"
        )
    deps = data.get("dependencies", [])
    audited = [d for d in deps if "skip_reason" not in d]
    vulnerable = [
        f"{d['name']} {d['version']}: {[v['id'] for v in d['vulns']]}"
        for d in audited
        if d.get("vulns")
    ]
    assert not vulnerable, f"known vulnerabilities: {vulnerable}"
    if not audited:
        pytest.skip(
            f"pip-audit audited nothing ({len(deps)} dependencies skipped, e.g."
            f" {deps[0].get('skip_reason') if deps else 'none'}): PyPI's vulnerability service is"
            " unreachable here"
        )


@pytest.mark.integration
def test_kheaders_tail_never_prints_a_secret_header(bootstrap: str, topic: str) -> None:
    import io

    from kheaders._model.redact import Redactor
    from kheaders.cli._tail import tail

    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, b"v", headers=[*SECRETS.items(), ("trace", b"visible")])
    assert producer.flush(10) == 0
    out = io.StringIO()
    assert (
        tail(bootstrap, topic, out, redactor=Redactor(), from_beginning=True, limit=1, timeout=10)
        == 0
    )
    text = out.getvalue()
    assert "trace: visible" in text
    assert text.count("<redacted>") == len(SECRETS)
    assert "s3cr3t" not in text
    assert b"s3cr3t".hex() not in text


# Credentials under keys the key rule does not know: only their shape gives them away.
SHAPED = {
    "x-note": b"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzM2NyM3QifQ.s3cr3t-sig",  # a JWT
    "Proxy-Authorization": b"Basic czNjcjN0OnMzY3IzdA==",  # known by its key now too
    "x-forwarded-creds": b"Basic czNjcjN0OnMzY3IzdC1GRkZG",
    "x-ci": b"ghp_s3cr3tAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    "x-hook": b"xoxb-s3cr3t-1234567890",
    "x-cloud": b"AKIAS3CR3TAAAAAAAAAA",
    "x-model": b"sk-s3cr3tAAAAAAAAAAAAAAAAAAAAAA",
    "x-db": b"postgres://app:s3cr3t@db:5432/orders",
}
SCHEMA_ID = b"\x01" + bytes(range(16))  # Schema Registry's header: shown, it is no secret


def _shaped_leaks(text: str) -> list[str]:
    needles = ["s3cr3t", "S3CR3T", "czNjcjN0", "eyJzdWIi"]
    return [n for n in needles if n in text or n.encode().hex() in text]


@pytest.mark.integration
def test_credential_shaped_values_are_redacted_whatever_their_key_end_to_end(
    bootstrap: str, topic: str
) -> None:
    import io

    from kheaders._model.redact import Redactor
    from kheaders.cli._tail import tail

    headers = [*SHAPED.items(), ("__key_schema_id", SCHEMA_ID), ("trace", b"visible")]
    with capture_logs() as events:
        producer = Producer(
            {"bootstrap.servers": bootstrap}, interceptors=[LoggingInterceptor("info")]
        )
        producer.produce(topic, b"v", headers=headers)
        assert producer.flush(10) == 0
    logged = json.dumps(events, default=repr)
    assert _shaped_leaks(logged) == []
    assert "visible" in logged
    assert SCHEMA_ID.hex() in logged  # no longer hidden for containing "key"
    out = io.StringIO()
    tail(bootstrap, topic, out, redactor=Redactor(), from_beginning=True, limit=1, timeout=10)
    text = out.getvalue()
    assert _shaped_leaks(text) == []
    assert text.count("<redacted>") == len(SHAPED)
    assert f"__key_schema_id: 0x{SCHEMA_ID.hex()}" in text


def test_value_detection_is_configurable() -> None:
    from kheaders.redaction import Redactor

    jwt = SHAPED["x-note"]
    assert render_headers([("x-note", jwt)], Redactor(values=False)) == [("x-note", jwt.decode())]
    custom = Redactor(value_patterns=[r"^internal-[0-9]+$"])
    assert render_headers([("x", b"internal-42")], custom) == [("x", "<redacted>")]
    assert render_headers([("x", b"internal-42")]) == [("x", "internal-42")]
    plain = [
        b"hello world",
        b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        b"application/json",
        b"Basic",
        b"order-1234",
        b"a.b.c",
    ]
    assert all(text != "<redacted>" for _, text in render_headers([("x", v) for v in plain]))


@pytest.mark.parametrize(
    "build",
    [
        "Headers([('authorization', b'Bearer s3cr3t', 'x')])",
        "Headers([(b'Bearer s3cr3t', 'authorization')])",  # swapped: the key is the secret
        "Headers([['authorization']])",
        "Headers([('authorization', {'token': 's3cr3t'})])",
        "Headers().add(('authorization', b'Bearer s3cr3t', 1))",
        "Producer(CONF).produce('t', b'v', headers=[('authorization', b'Bearer s3cr3t', 'x')])",
        "Producer(CONF, interceptors=[Noop()]).produce('t', b'v', headers=[('authorization', b'Bearer s3cr3t', 'x')])",  # noqa: E501
        "Producer(CONF).produce('t', b'v', headers=[('a\\x00uthorization', b'Bearer s3cr3t')])",
        "Producer(CONF).produce('t', b'v', headers=[('authorization', 's3cr3t\\udcff')])",
    ],
)
def test_malformed_headers_never_echo_a_value_in_the_exception(build: str) -> None:
    class Noop:
        def on_send(self, record: Any) -> Any:
            return record

    scope = {"Headers": Headers, "Producer": Producer, "Noop": Noop}
    scope["CONF"] = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}
    with pytest.raises((TypeError, ValueError)) as caught:
        eval(build, scope)
    assert "s3cr3t" not in str(caught.value)
    assert "s3cr3t" not in repr(caught.value)


def test_reprs_redact_sensitive_and_credential_shaped_values() -> None:
    from kheaders import Header, ProducerRecord

    h = Headers([("authorization", b"Bearer s3cr3t"), ("x-note", SHAPED["x-note"]), ("a", b"1")])
    for text in (
        repr(h),
        repr(list(h)),
        repr(h.last_header("x-note")),
        repr(ProducerRecord("t", b"v", headers=h)),
    ):
        assert _shaped_leaks(text) == [], text
    assert repr(Header("a", b"1")) == "Header(key='a', value=b'1')"
    assert "<redacted>" in repr(Header("Cookie", b"sid=1"))


def test_logging_interceptor_value_detection_follows_its_config_key() -> None:
    from kheaders import ProducerRecord

    record = ProducerRecord("t", b"v", headers=Headers([("x-note", SHAPED["x-note"])]))
    for setting, shown in (("true", False), ("false", True)):
        interceptor = LoggingInterceptor("info")
        interceptor.configure({"kheaders.logging.redact.values": setting})
        with capture_logs() as events:
            interceptor.on_send(record)
        assert (SHAPED["x-note"].decode() in json.dumps(events)) is shown
