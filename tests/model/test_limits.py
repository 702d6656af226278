"""Header limits: checked before librdkafka sees a record; the error names limit, key and size."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition
from hypothesis import given
from hypothesis import strategies as st

from kheaders import ConfigurationError, HeaderLimitError, HeaderLimits, Headers, Producer
from kheaders._model.limits import DEFAULT_LIMITS, MIB


def test_defaults_are_generous_and_below_kafkas_one_megabyte_batch() -> None:
    assert HeaderLimits(1000, 1024, MIB, MIB) == DEFAULT_LIMITS
    DEFAULT_LIMITS.check([("traceparent", b"x" * 55)] * 20)


@pytest.mark.parametrize(
    ("limits", "headers", "pattern"),
    [
        (HeaderLimits(max_headers=2), [("a", b"")] * 3, r"3 headers exceed max_headers=2"),
        (
            HeaderLimits(max_key_bytes=3),
            [("ok", b""), ("long", b"")],
            r"'long'.*4 bytes.*max_key_bytes=3",
        ),
        (HeaderLimits(max_key_bytes=3), [("éé", None)], r"'éé'.*4 bytes"),  # UTF-8 bytes count
        (HeaderLimits(max_value_bytes=4), [("id", b"12345")], r"'id'.*5 bytes.*max_value_bytes=4"),
        (HeaderLimits(max_value_bytes=4), [("s", "ééé")], r"'s'.*6 bytes"),
        (
            HeaderLimits(max_total_bytes=10),
            [("a", b"1234"), ("b", b"1234")],
            r"15 bytes.*max_total_bytes=10",
        ),
    ],
)
def test_each_limit_raises_naming_limit_key_and_size(
    limits: HeaderLimits, headers: list[tuple[str, bytes | str | None]], pattern: str
) -> None:
    with pytest.raises(HeaderLimitError, match=pattern):
        limits.check(headers)


@given(
    st.lists(
        st.tuples(
            st.text(
                st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                min_size=1,
                max_size=10,
            ),
            st.none() | st.binary(max_size=30),
        ),
        max_size=8,
    )
)
def test_total_is_the_exact_encoded_size(items: list[tuple[str, bytes | None]]) -> None:
    size = len(Headers(items).to_bytes())
    HeaderLimits(max_total_bytes=size).check(items)
    if size > 1:
        with pytest.raises(HeaderLimitError, match="max_total_bytes"):
            HeaderLimits(max_total_bytes=size - 1).check(items)


def test_limits_below_one_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_headers"):
        HeaderLimits(max_headers=0)


def test_limits_come_from_config_keys() -> None:
    limits = HeaderLimits.from_config(
        {"kheaders.header.limits.max.headers": "5", "kheaders.header.limits.max.value.bytes": 7}
    )
    assert limits == HeaderLimits(max_headers=5, max_value_bytes=7)
    assert HeaderLimits.from_config({"kheaders.header.limits.enabled": "false"}) is None
    with pytest.raises(ConfigurationError, match=r"kheaders.header.limits.max.heders"):
        HeaderLimits.from_config({"kheaders.header.limits.max.heders": 5})
    with pytest.raises(ConfigurationError, match=r"must be an integer"):
        HeaderLimits.from_config({"kheaders.header.limits.max.headers": "many"})


class _Recorder:
    def __init__(self) -> None:
        self.acks: list[BaseException | None] = []

    def on_send(self, record: object) -> object:
        return record

    def on_acknowledgement(
        self, metadata: object, error: BaseException | None, headers: Headers
    ) -> None:
        self.acks.append(error)


@pytest.mark.integration
def test_producer_rejects_oversized_headers_before_librdkafka_and_sends_the_rest(
    bootstrap: str, topic: str
) -> None:
    plain = Producer({"bootstrap.servers": bootstrap, "kheaders.header.limits.max.value.bytes": 8})
    with pytest.raises(HeaderLimitError, match=r"'big': value of 9 bytes"):
        plain.produce(topic, b"v", headers=[("big", b"x" * 9)])
    with pytest.raises(HeaderLimitError, match=r"'big'"):
        plain.produce(topic, b"v", headers=Headers([("big", b"x" * 9)]))
    assert len(plain) == 0  # nothing reached librdkafka's queue
    plain.produce(topic, b"ok", headers=[("small", b"x" * 8)])
    assert plain.flush(10) == 0

    recorder = _Recorder()
    chained = Producer(
        {"bootstrap.servers": bootstrap},
        interceptors=[recorder],
        limits=HeaderLimits(max_headers=1),
    )
    with pytest.raises(HeaderLimitError, match="max_headers=1"):
        chained.produce(topic, b"v", headers=[("a", b"1"), ("b", b"2")])
    assert len(recorder.acks) == 1
    assert isinstance(recorder.acks[0], HeaderLimitError)  # the interceptors were told
    chained.produce(topic, b"ok2", headers=[("a", b"1")])
    assert chained.flush(10) == 0

    unlimited = Producer({"bootstrap.servers": bootstrap}, limits=False)
    unlimited.produce(topic, b"big", headers=[("k", b"x" * 2000)] * 3)
    assert unlimited.flush(10) == 0

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "limits"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values = []
    for _ in range(30):
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            values.append(msg.value())
        if len(values) == 3:
            break
    consumer.close()
    assert values == [b"ok", b"ok2", b"big"]
