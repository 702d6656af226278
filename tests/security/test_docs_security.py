"""The examples of docs/security.md run against the TLS + SASL broker and do what they say.

The python blocks run in order in one namespace, as a reader pastes them; ``localhost:9094``
becomes the SASL_SSL listener, ``localhost:9092`` the suite's plain broker, ``ca.pem`` the
test CA, ``payments`` a fresh topic, and ``KAFKA_PASSWORD`` holds the test password. The
``kheaders tail`` console example runs through the CLI's entry point with its file written
as shown (the ``...`` being the password).
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from kheaders.broker import ApacheKafka, create_topic
from kheaders.cli import main as cli_main
from tests.security.helpers import read_all
from tests.support.security import PASSWORD, Certificates

pytestmark = pytest.mark.integration
DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"


def _localised(text: str, secure: str, plain: str, ca: Path, topic: str) -> str:
    text = text.replace("localhost:9094", secure).replace("localhost:9092", plain)
    text = text.replace('"ca.pem"', repr(str(ca))).replace("=ca.pem", f"={ca}")
    return re.sub(r"\bpayments\b", topic, text)


def test_docs_security_examples(
    secure_broker: ApacheKafka,
    secured: Callable[[str], dict[str, object]],
    certificates: Certificates,
    bootstrap: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = f"payments-{uuid.uuid4().hex[:8]}"
    create_topic(secure_broker.bootstrap, topic)
    create_topic(secure_broker.bootstrap, topic + "-dlt")
    create_topic(bootstrap, topic)
    address = secure_broker.address("SASL_SSL")
    monkeypatch.setenv("KAFKA_PASSWORD", PASSWORD)
    text = DOC.read_text()
    clients, services, refused = re.findall(r"```python\n(.*?)```", text, re.S)
    (console,) = re.findall(r"```console\n(.*?)```", text, re.S)

    def local(code: str) -> str:
        return _localised(code, address, bootstrap, certificates.ca, topic)

    namespace: dict[str, object] = {}
    exec(local(clients), namespace)  # the record is produced over SASL_SSL
    namespace["consumer"].close()  # type: ignore[attr-defined]
    (msg,) = read_all(secured("scram"), topic, 1)
    assert (msg.value(), msg.headers().last_value("tenant")) == (b"paid", b"acme")

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(local(services), namespace)
    assert out.getvalue() == f"{(topic,)}\n"  # what the comment says, with the test's topic

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(local(refused), namespace)
    printed = out.getvalue()
    assert printed.startswith(f"source cluster '{address}' did not answer: ")
    assert "SASL authentication error" in printed
    assert "not-it" not in printed

    # the console example: the file as `cat` shows it, then the command
    lines = local(console).splitlines()
    command = next(i for i, line in enumerate(lines) if line.startswith("$ kheaders "))
    settings = "\n".join(lines[1:command]).replace("=...", f"={PASSWORD}")
    (tmp_path / "client.properties").write_text(settings + "\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    argv = shlex.split(lines[command].removeprefix("$ kheaders "))
    assert cli_main(argv) == 0
    shown = capsys.readouterr().out
    assert "value: paid" in shown
    assert "tenant: acme" in shown
