"""A consumer config the broker refuses for good stops the processor with a clear error,
instead of logging forever (issue 33.4): both drivers, on the Apache Kafka broker (its
``group.min.session.timeout.ms`` is 1000)."""

from __future__ import annotations

import pytest

from kheaders import ConfigurationError
from tests.processing.helpers import Running, config, make, wait_for


@pytest.mark.integration
def test_a_session_timeout_below_the_brokers_minimum_stops_naming_the_setting(
    driver: str, bootstrap: str, topic: str
) -> None:
    settings = config(bootstrap, **{"session.timeout.ms": 500, "heartbeat.interval.ms": 100})
    running = Running(make(driver, settings, [topic], lambda msg: None, handle_signals=False))
    wait_for(lambda: not running.alive, 60, "the processor to stop by itself")
    with pytest.raises(ConfigurationError, match=r"session\.timeout\.ms.*(?i:invalid session)"):
        running.stop()
