"""The python examples of docs/mirror.md run against two real clusters and do what they say.

Blocks 1-3 run here in one namespace, as a reader pastes them (blocks 4-5, the Spark form, run
in tests/mirror/test_spark_mirror.py); ``localhost:9092`` is cluster A, ``localhost:9093``
cluster B, topic names get a unique suffix, the mirror joins its group with Tansu's fast
settings, and the comment standing for "later" becomes a wait until the mirror copied the
records produced first.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer as RawProducer

from kheaders.broker import create_topic, free_port
from tests.mirror.conftest import fast_group, read_all, wait_for

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "mirror.md"
LATER = "# ... later, e.g. on SIGTERM: drain what is in flight, commit, return"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def _localised(code: str, suffix: str, a: str, b: str) -> str:
    code = code.replace('"localhost:9092"', repr(a)).replace('"localhost:9093"', repr(b))
    for name in ("orders", "payments", "no-tenant", "mirror-us-to-eu"):
        code = code.replace(f'"{name}"', f'"{name}-{suffix}"')
    # Tansu joins a group in ~3 s with these, ~23 s with librdkafka's defaults
    return code.replace('"group.id": ', f'**{fast_group()!r}, "group.id": ')


def test_docs_mirror_examples(bootstrap: str, cluster_b: str) -> None:
    suffix = uuid.uuid4().hex[:8]
    orders, payments = f"orders-{suffix}", f"payments-{suffix}"
    for topic in (orders, payments):
        create_topic(bootstrap, topic)
        create_topic(bootstrap, topic + "-dlt")
    targets = (orders, f"{orders}-eu", f"{orders}-urgent", payments, f"{payments}-urgent")
    for topic in (*targets, f"no-tenant-{suffix}"):
        create_topic(cluster_b, topic)
    source = RawProducer({"bootstrap.servers": bootstrap})
    source.produce(orders, b"eu", headers=[("region", b"eu")])
    source.produce(orders, b"test", headers=[("kind", b"test"), ("region", b"eu")])
    source.produce(orders, b"urgent", headers=[("priority", b"high")])
    source.produce(payments, b"untenanted")
    source.flush(10)
    routing, running, dedup, *spark = _blocks()
    assert len(spark) == 2
    namespace: dict[str, object] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_localised(routing, suffix, bootstrap, cluster_b), namespace)
        assert out.getvalue().splitlines()[-1] == f"('orders-{suffix}-eu',)"
        code = _localised(running, suffix, bootstrap, cluster_b)
        assert LATER in code
        wait = "wait_for(lambda: mirror.stats.total('sent') == 4, what='the copies')"
        exec(code.replace(LATER, wait), {**namespace, "wait_for": wait_for})
        assert out.getvalue().splitlines()[-1] == "1"  # one record took the "eu orders" route
        exec(dedup, namespace)
        assert out.getvalue().splitlines()[-1] == "[True, True, False]"
    assert [m.value() for m in read_all(cluster_b, f"{orders}-eu", 1)] == [b"eu"]
    assert [m.value() for m in read_all(cluster_b, f"{orders}-urgent", 1)] == [b"urgent"]
    assert [m.value() for m in read_all(cluster_b, orders, 1)] == [b"urgent"]
    assert [m.value() for m in read_all(cluster_b, f"no-tenant-{suffix}", 1)] == [b"untenanted"]


WALKTHROUGH = "## From nothing, with the command line"


def _walkthrough() -> list[str]:
    """The shell commands of the walkthrough, one per line, comment lines left out."""
    section = DOC.read_text().split(WALKTHROUGH, 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if not line.startswith("#")]


def test_docs_mirror_cli_walkthrough_runs_as_written(tmp_path: Path) -> None:
    """Each command runs as written, but for ``kheaders`` (``python -m kheaders.cli`` from this
    tree), ``python`` (this interpreter) and the two ports (free ones); ``kheaders broker ...
    &`` starts a background process the test waits for (its first line) and stops at the end."""
    ports = {"9092": str(free_port()), "9093": str(free_port())}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("KHEADERS_BOOTSTRAP", None)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = shlex.quote(sys.executable)
    for name, target in (("kheaders", f"{python} -m kheaders.cli"), ("python", python)):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {target} "$@"\n')
        shim.chmod(0o755)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    brokers: list[subprocess.Popen[str]] = []
    results: list[subprocess.CompletedProcess[str]] = []
    try:
        for line in _walkthrough():
            command = line.split("  # ", 1)[0].strip()
            for doc_port, port in ports.items():
                command = command.replace(f"127.0.0.1:{doc_port}", f"127.0.0.1:{port}")
                command = command.replace(f"--port {doc_port}", f"--port {port}")
            if command.endswith("&"):
                proc = subprocess.Popen(
                    ["sh", "-c", f"exec {command.removesuffix('&')}"],
                    stdout=subprocess.PIPE,
                    text=True,
                    env=env,
                    cwd=tmp_path,
                )
                brokers.append(proc)
                assert proc.stdout is not None
                assert proc.stdout.readline().startswith("bootstrap.servers=")  # it is up
                continue
            results.append(
                subprocess.run(
                    ["sh", "-c", command],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=tmp_path,
                    timeout=180,
                    check=False,
                )
            )
    finally:
        for proc in brokers:
            proc.terminate()
        for proc in brokers:
            proc.wait(20)
    assert len(brokers) == 2
    create, check, create_topics, describe, produce, run, tail = results
    assert create.returncode == 0, create.stderr
    assert check.returncode == 2  # as the comment under it says
    assert check.stderr.startswith("kheaders mirror: 2 problems:\n"), check.stderr
    assert "target topic 'orders' does not exist" in check.stderr
    assert "orders-dlt" not in check.stderr  # created by the check, as the comment says
    for done in (create_topics, describe, produce, run, tail):
        assert done.returncode == 0, (done.args, done.stderr)
    assert create_topics.stdout.startswith("mirror kheaders-")
    assert describe.stdout.startswith("orders: 3 partitions\n")
    assert "default\tsent\torders -> orders\t1" in run.stdout
    assert "  value: hello\n" in tail.stdout
    assert "    region: eu\n" in tail.stdout
    assert "    kheaders.origin.cluster: kheaders-" in tail.stdout
