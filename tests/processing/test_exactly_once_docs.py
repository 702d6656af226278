"""docs/processing.md's exactly-once service (its fifth python block; an ``Elsewhere`` of
tests/docs/test_docs_examples.py), run as a process: each good order's invoice is
read_committed once, the bad order's dead letter is committed, SIGTERM stops it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from kheaders.broker import Broker
from tests.processing.helpers import produce, wait_for
from tests.processing.test_exactly_once import read_to_end

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "processing.md"
BLOCK = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[4]


def test_the_block_is_the_exactly_once_service() -> None:
    assert "ExactlyOnceProcessor(" in BLOCK
    assert "emit(" in BLOCK


def test_the_exactly_once_service_invoices_each_order_once_and_stops_on_sigterm(
    broker: Broker, bootstrap: str, topic_factory: Callable[..., str], tmp_path: Path
) -> None:
    if broker.kind == "embedded":
        pytest.skip("Tansu serves aborted transactional records to read_committed readers")
    orders, invoices = topic_factory(), topic_factory()
    produce(
        bootstrap,
        orders,
        [
            {"key": b"%d" % o["id"], "value": json.dumps(o).encode()}
            for o in ({"id": 1, "amount": 10}, {"id": 2, "amount": -1}, {"id": 3, "amount": 5})
        ],
    )
    code = (
        BLOCK.replace('"orders"', f'"{orders}"')
        .replace('"invoices"', f'"{invoices}"')
        .replace('"invoicing"', f'"invoicing-{uuid.uuid4().hex[:8]}"')
    )
    script = tmp_path / "invoicing.py"
    script.write_text(code)
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, str(script)],
            env={
                **os.environ,
                "KHEADERS_BOOTSTRAP": bootstrap,
                "PYTHONPATH": str(ROOT),
                "INSTANCE": uuid.uuid4().hex[:8],
            },
            stdout=sink,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for(
                lambda: (
                    len(read_to_end(bootstrap, invoices)) >= 2
                    and len(read_to_end(bootstrap, f"{orders}-dlt")) >= 1
                ),
                what="the invoices and the dead letter committed",
            )
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    assert proc.returncode == 0
    assert out.read_text().splitlines()[-1] == "stopped"
    sent = read_to_end(bootstrap, invoices)
    assert sorted((json.loads(m.value()) for m in sent), key=lambda d: d["order"]) == [
        {"order": 1, "due": 10},
        {"order": 3, "due": 5},
    ]
    assert sorted((m.key(), dict(m.headers())["order-offset"]) for m in sent) == [
        (b"1", b"0"),
        (b"3", b"2"),
    ]
    (dead,) = read_to_end(bootstrap, f"{orders}-dlt")
    assert json.loads(dead.value()) == {"id": 2, "amount": -1}
