"""An interceptor failure is logged with its traceback, never with the record's header values."""

from __future__ import annotations

from structlog.testing import capture_logs

from kheaders import ProducerRecord
from kheaders._client.chain import InterceptorChain


class Failing:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        return self.deeper(record)

    def deeper(self, record: ProducerRecord) -> ProducerRecord:
        raise ValueError("boom")


def test_failure_log_carries_the_traceback_down_to_the_raising_frame() -> None:
    chain = InterceptorChain([Failing()])
    with capture_logs() as logs:
        chain.send(ProducerRecord("t", headers=[("authorization", b"s3cr3t")]))
    (event,) = logs
    assert event["event"] == "interceptor failed, skipped"
    trace = event["exception"]
    assert trace.startswith("Traceback (most recent call last):")
    assert "in deeper" in trace
    assert trace.rstrip().endswith("ValueError: boom")
    assert "s3cr3t" not in repr(event)  # text, not exc_info: no renderer can print locals
