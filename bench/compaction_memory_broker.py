"""Bytes per key a LatestState keeps after reading a real topic (tracemalloc).

Run: python bench/compaction_memory_broker.py [keys]
Uses KHEADERS_BOOTSTRAP, Docker, or the embedded broker (kheaders.broker). Produces ``keys``
keys of 12 bytes twice (16-byte values, one 8-byte version header), then measures what stays
allocated once LatestState (header strategy) has caught up; the consumer's own buffers are
outside tracemalloc (librdkafka allocates them in C) and freed anyway.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
import uuid

from confluent_kafka import Producer

from kheaders.broker import create_topic, find_or_start_broker
from kheaders.compaction import LatestState, encode_version


def main() -> None:
    keys = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    broker = find_or_start_broker()
    try:
        topic = create_topic(broker.bootstrap, f"memory-{uuid.uuid4().hex[:8]}")
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 20})
        for rnd in range(2):
            for i in range(keys):
                producer.produce(
                    topic,
                    key=b"key-%08d" % i,
                    value=b"%016d" % (i + rnd),
                    headers=[("version", encode_version(rnd))],
                )
                producer.poll(0)
        producer.flush(60)
        gc.collect()
        tracemalloc.start()
        state = LatestState(
            topic,
            config={"bootstrap.servers": broker.bootstrap},
            strategy="header",
            header="version",
        )
        assert state.run_until_caught_up(300)
        gc.collect()
        base_state_only = tracemalloc.get_traced_memory()[0]
        assert len(state) == keys
        print(f"{keys} keys read twice from a topic, header strategy:")
        print(f"  {base_state_only / keys:.1f} bytes/key kept (key, value, headers, entry, dict)")
        state.close()
        tracemalloc.stop()
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
