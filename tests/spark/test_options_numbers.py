"""Numeric read options: a bad number is a ConfigurationError naming the option and the rule."""

from __future__ import annotations

import pytest

from kheaders import ConfigurationError
from kheaders.spark._options import source_options

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}


@pytest.mark.parametrize(
    ("name", "text", "rule"),
    [
        ("minPartitions", "0", "a positive integer"),
        ("maxOffsetsPerTrigger", "x", "a positive integer"),
        ("fetchOffset.numRetries", "-1", r"an integer >= 0"),
        ("fetchOffset.retryIntervalMs", "1.5", r"an integer >= 0"),
    ],
)
def test_bad_numbers_name_the_option_and_the_rule(name: str, text: str, rule: str) -> None:
    with pytest.raises(ConfigurationError, match=rf"option '{name}' must be {rule}: '{text}'"):
        source_options({**BASE, name: text}, streaming=False)


def test_numbers_within_their_rule_are_read_and_defaults_fill_the_rest() -> None:
    opts = source_options(
        {**BASE, "minPartitions": "4", "fetchOffset.numRetries": "0"}, streaming=False
    )
    assert (opts.min_partitions, opts.fetch_retries, opts.fetch_retry_interval_ms) == (4, 0, 10)
    assert opts.max_offsets_per_trigger is None
