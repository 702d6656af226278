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
import re
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer as RawProducer

from kheaders.broker import create_topic
from tests.mirror.conftest import fast_group, read_all, wait_for

pytestmark = pytest.mark.integration
DOC = Path(__file__).resolve().parents[2] / "docs" / "mirror.md"
LATER = "# ... later, e.g. on SIGTERM: drain what is in flight, commit, return"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def _localised(code: str, suffix: str, a: str, b: str) -> str:
    code = code.replace('"localhost:9092"', repr(a)).replace('"localhost:9093"', repr(b))
    for name in ("orders", "payments", "no-tenant", "mirror-us-to-eu"):
        code = code.replace(f'"{name}"', f'"{name}-{suffix}"')
    # Tansu joins a group in ~3 s with these, ~23 s with librdkafka's defaults
    return code.replace("group_id=", f"consumer_config={fast_group()!r}, group_id=")


def test_docs_mirror_examples(bootstrap: str, cluster_b: str) -> None:
    suffix = uuid.uuid4().hex[:8]
    orders, payments = f"orders-{suffix}", f"payments-{suffix}"
    for topic in (orders, payments):
        create_topic(bootstrap, topic)
        create_topic(bootstrap, topic + ".dlt")
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
