"""``bench.instructions``: the callgrind harness's contenders run, send and end every span.

The callgrind runs themselves take minutes (they are the benchmark); each contender's child
runs once without valgrind in ``python -m bench.smoke`` (a stage of .ci/run); here, the fake
producer and the report's arithmetic.
"""

from __future__ import annotations

from bench._icount_child import FakeProducer
from bench.instructions import report


def test_fake_producer_serves_reports_with_offsets_in_order() -> None:
    seen: list[tuple[object, int | None]] = []
    p = FakeProducer({})
    for i in range(3):
        p.produce(
            "t", b"v", b"k%d" % i, on_delivery=lambda err, msg: seen.append((err, msg.offset()))
        )
    p.produce("t", b"no callback")
    assert len(p) == 3
    assert p.flush() == 0
    assert seen == [(None, 0), (None, 1), (None, 2)]


def test_report_subtracts_the_sdk_span() -> None:
    text = report({"sdk span only": 100.0, "kheaders span mode": 250.0})
    assert "kheaders span mode" in text
    assert text.splitlines()[-1].split()[-1] == "150"
