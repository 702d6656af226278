"""Records the target cannot take as they are go to the source's dead-letter topic, counted,
with the reason; hostile hops headers are bounded and refused the same way; good records
around them are copied and every offset is committed past."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from structlog.testing import capture_logs

from kheaders.mirror import HOPS, MAX_HOPS, Mirror
from tests.mirror.conftest import fast_group, read_all, running, wait_for

kafka = pytest.importorskip("kafka", reason="kafka-python is in the dev extra")

pytestmark = pytest.mark.integration


class RawKey(str):
    """A header key kafka-python writes as the given bytes (it calls ``key.encode()``)."""

    raw: bytes

    def __new__(cls, raw: bytes) -> RawKey:
        self = super().__new__(cls, raw.decode("utf-8", "surrogateescape"))
        self.raw = raw
        return self

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        return self.raw


# (value, headers, the reason's words when dead-lettered, else None)
RECORDS: list[tuple[bytes, list[tuple[str, bytes]], str | None]] = [
    (b"good-0", [("h", b"1")], None),
    (b"non-utf8-key", [(RawKey(b"k\xed\xb3\xbf"), b"x"), ("h", b"2")], "not UTF-8"),
    (b"x" * 20_000, [("h", b"3")], "size limit"),
    (b"malformed-hops", [(HOPS, b"a,,b")], "not a cluster id"),
    (b"huge-hops", [(HOPS, b"a" * 5000)], "bytes (limit"),
    (b"two-hops", [(HOPS, b"a"), (HOPS, b"b")], "2 kheaders.hops headers"),
    (b"hops-at-limit", [(HOPS, ",".join(f"c{i}" for i in range(MAX_HOPS)).encode())], "exceed"),
    (b"good-foreign-hops", [(HOPS, b"elsewhere")], None),
    (b"good-2", [], None),
]


def test_bad_records_are_dead_lettered_on_the_source_with_their_reason(
    bootstrap: str, cluster_b: str, both_topics: Callable[..., str]
) -> None:
    topic = both_topics()
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, max_request_size=1_000_000)
    for value, headers, _ in RECORDS:
        producer.send(topic, value=value, headers=headers).get(10)
    producer.close()
    mirror = Mirror(
        {"bootstrap.servers": bootstrap, "group.id": f"bad-{topic}", **fast_group()},
        cluster_b,
        [topic],
        producer_config={"message.max.bytes": 10_000},
        dead_letter_config={"message.max.bytes": 15_000},  # the 20,000-byte record: bare
    )
    bad = [r for r in RECORDS if r[2] is not None]
    good = [r for r in RECORDS if r[2] is None]
    with capture_logs() as logs, running(mirror):
        wait_for(
            lambda: (
                mirror.stats.total("dead_lettered") == len(bad)
                and mirror.stats.total("sent") == len(good)
            ),
            what="every record copied or dead-lettered",
        )
    assert mirror.committed() == {(topic, 0): len(RECORDS)}
    copied = read_all(cluster_b, topic, len(good))
    assert [m.value() for m in copied] == [r[0] for r in good]
    assert dict(copied[1].headers())[HOPS].startswith(b"elsewhere,")
    dead = read_all(bootstrap, topic + "-dlt", len(bad))
    # the record too large for the dead-letter topic too is reported without key and value
    assert [m.value() for m in dead] == [None if len(r[0]) > 15_000 else r[0] for r in bad]
    for msg, (_, headers, reason) in zip(dead, bad, strict=True):
        found = dict(msg.headers())
        assert found["kheaders.dlt.error.type"] == b"kheaders.UnmirrorableRecordError"
        assert reason is not None
        assert reason.encode() in found["kheaders.dlt.error.message"]
        assert found["kheaders.dlt.original.topic"] == topic.encode()
        if msg.value() is None:
            assert (
                b"too large for the dead-letter topic as well"
                in found["kheaders.dlt.error.message"]
            )
        if HOPS in dict(headers):  # the refused header is kept, byte for byte, for inspection
            assert [h for h in msg.headers() if h[0] == HOPS] == headers
    events = [e for e in logs if e["event"] == "mirror.dead_lettered"]
    assert len(events) == len(bad)
    assert all("x" * 100 not in str(e) for e in events)  # never a value in the log
