"""A processing service run as a process by the tests: ``python -m tests.processing.service
BOOTSTRAP TOPIC GROUP OUT [SLEEP_S]``. It appends each handled value to OUT (a line each,
flushed) and fails values ending in 7 of every 20 (``v7``, ``v27``, ...). SIGTERM stops it.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from kheaders.broker import fast_consumer_config
from kheaders.processing import Processor, RetryTopics


def main(bootstrap: str, topic: str, group: str, out_path: str, sleep_s: float = 0.0) -> int:
    with open(out_path, "a", buffering=1) as out:

        def handle(msg: Any) -> None:
            value: bytes = msg.value()
            out.write(f"{msg.topic()} {value.decode()}\n")
            if sleep_s:
                time.sleep(sleep_s)
            if int(value[1:]) % 20 == 7:
                raise ValueError("poison")

        # a short session: the restarted run joins once the killed one's session expired
        processor = Processor(
            fast_consumer_config(bootstrap, group, **{"session.timeout.ms": 3000}),
            [topic],
            handle,
            retry=RetryTopics(delays=[0.2]),
            commit_interval=0.2,
            batch_size=50,
        )
        processor.run()  # in the main thread: SIGTERM and SIGINT stop it
    print("stopped cleanly", flush=True)
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[0], args[1], args[2], args[3], float(args[4]) if len(args) > 4 else 0.0))
