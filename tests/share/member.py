"""One share-group member in a process of its own, for tests/share/test_members.py.

``python -m tests.share.member BOOTSTRAP TOPIC GROUP OUT [HOLD]``: runs a ShareProcessor whose
handler appends ``pid offset delivery_count value`` to OUT per record (one write each, so a
kill -9 loses none that was written), sleeping 10 ms per record. A record whose value is HOLD
and which is delivered for the first time is announced as ``HOLD pid offset`` and then held
for ever (the test kills this process). SIGTERM stops it cleanly.
"""

from __future__ import annotations

import os
import sys
import time

from confluent_kafka import Message

from kheaders.processing import ShareProcessor


def main(bootstrap: str, topic: str, group: str, out: str, hold: str | None = None) -> None:
    pid = os.getpid()
    sink = open(out, "a", buffering=1)  # noqa: SIM115 - open for the process's life

    def handle(msg: Message) -> None:
        value = (msg.value() or b"").decode()
        if value == hold and msg.delivery_count() == 1:
            sink.write(f"HOLD {pid} {msg.offset()}\n")
            while True:
                time.sleep(60)
        time.sleep(0.01)
        sink.write(f"{pid} {msg.offset()} {msg.delivery_count()} {value}\n")

    config = {"bootstrap.servers": bootstrap, "group.id": group, "max.poll.records": 10}
    sink.write(f"STARTED {pid}\n")
    ShareProcessor(config, [topic], handle).run()


if __name__ == "__main__":
    main(*sys.argv[1:])
