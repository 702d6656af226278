"""The Spark sink applies the header-key rule before librdkafka sees a row (no Spark needed:
the task's produce loop is fed an Arrow batch directly)."""

from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from kheaders import InvalidNameError  # noqa: E402
from kheaders.spark._options import SinkOptions  # noqa: E402
from kheaders.spark._writer import _Delivery, _produce_batch  # noqa: E402

HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])


class Recording:
    """The producer calls the sink's loop makes; nothing may be produced."""

    def __init__(self) -> None:
        self.produced: list[object] = []

    def produce(self, *args: object, **kwargs: object) -> None:
        self.produced.append((args, kwargs))

    def poll(self, timeout: float = 0) -> int:
        return 0


@pytest.mark.parametrize(
    ("key", "error"),
    [("a\x00b", InvalidNameError), ("", InvalidNameError), (None, TypeError)],
)
def test_a_header_key_librdkafka_cannot_take_fails_the_row_before_sending(
    key: str | None, error: type[Exception]
) -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "value": pa.array([b"v"], pa.binary()),
            "headers": pa.array([[{"key": key, "value": b"secret"}]], pa.list_(HEADER)),
        }
    )
    producer = Recording()
    options = SinkOptions(conf={}, topic="t", columns=("value", "headers"), flush_timeout_s=1.0)
    with pytest.raises(error) as caught:
        _produce_batch(producer, options, batch, _Delivery())  # type: ignore[arg-type]
    assert "secret" not in str(caught.value)
    assert producer.produced == []
