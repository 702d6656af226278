"""bench/share.py's contenders run on the test broker and each handles every record."""

from __future__ import annotations

import confluent_kafka
import pytest

import kheaders
from bench import share
from bench.processing import fill

pytestmark = pytest.mark.integration


def test_every_contender_handles_every_record_and_reports_rates(bootstrap: str) -> None:
    n = 300
    topic = fill(bootstrap, n)
    runs = [
        share.hand_loop(confluent_kafka.ShareConsumer, bootstrap, topic, n),
        share.hand_loop(confluent_kafka.ShareConsumer, bootstrap, topic, n, headers=True),
        share.hand_loop(kheaders.ShareConsumer, bootstrap, topic, n),
        share.processor(bootstrap, topic, n),
    ]
    for wall, cpu in runs:  # each returns only once its clock counted n records
        assert wall > 0
        assert cpu > 0
