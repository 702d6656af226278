"""An exactly-once processing service run as a process by the tests: ``python -m
tests.processing.exactly_once_service BOOTSTRAP TOPIC OUT GROUP TRANSACTIONAL_ID LOG``.

Each record ``v<i>`` is appended to LOG (a line each, flushed: what was handled, aborted
transactions included) and emitted to OUT as ``out-v<i>`` in the record's transaction;
``v<i>`` with ``i % 20 == 7`` fails every time (a retry topic, then the dead-letter topic).
A short pause per record keeps a transaction open most of the time, so a kill -9 lands
between a batch's first output and its commit. SIGTERM stops it.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from kheaders.broker import fast_consumer_config
from kheaders.processing import ExactlyOnceProcessor, RetryTopics, emit


def main(bootstrap: str, topic: str, out: str, group: str, txid: str, log_path: str) -> int:
    with open(log_path, "a", buffering=1) as log:

        def handle(msg: Any) -> None:
            value: bytes = msg.value()
            log.write(f"{msg.topic()} {value.decode()}\n")
            time.sleep(0.003)
            if int(value[1:]) % 20 == 7:
                raise ValueError("poison")
            emit(out, b"out-" + value, msg.key(), headers=[("from", value)])

        # static membership: a restart takes the killed run's partitions at once
        config = fast_consumer_config(
            bootstrap, group, **{"session.timeout.ms": 6000, "group.instance.id": txid}
        )
        processor = ExactlyOnceProcessor(
            config,
            [topic],
            handle,
            transactional_id=txid,
            retry=RetryTopics(delays=[0.2]),
            batch_size=40,
        )
        processor.run()  # in the main thread: SIGTERM and SIGINT stop it
    print("stopped cleanly", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:7]))
