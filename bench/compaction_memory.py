"""Bytes per key that the KIP-280 latest state keeps (tracemalloc), for docs/compaction.md.

Run: python bench/compaction_memory.py [keys]
Simulates what LatestState folds from a consumer: per record a 12-byte key (``b"key-%08d"``), a
16-byte value, and (header strategy) confluent's header list with one 8-byte version header.
Every key is written twice, so the table also replaces entries.  Reported: the traced bytes
that stay allocated per key, in total and without the key/value/header payload the consumer
hands over anyway.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc

from kheaders.compaction import CompactionRules, StateTable, encode_version


def measure(keys: int, strategy: str) -> tuple[float, float]:
    rules = CompactionRules.create(strategy, header="version")
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    table = StateTable(rules, "t")
    payload = 0
    offset = 0
    ts = 1_763_700_000_000
    for rnd in range(2):
        for i in range(keys):
            key = b"key-%08d" % i
            value = b"%016d" % (i + rnd)
            headers = [("version", encode_version(rnd))] if strategy == "header" else None
            table.offer(key, value, headers, 0, offset, ts + offset)
            offset += 1
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    for entry in table.table.values():
        payload += sys.getsizeof(entry.key) + sys.getsizeof(entry.value)
        if entry.headers is not None:
            h = entry.headers
            assert isinstance(h, list)
            payload += sys.getsizeof(h) + sum(sys.getsizeof(t) + sys.getsizeof(t[1]) for t in h)
    tracemalloc.stop()
    assert table.live == keys
    return used / keys, (used - payload) / keys


def main() -> None:
    keys = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    print(f"{keys} keys, 12-byte keys, 16-byte values, every key written twice")
    for strategy in ("offset", "timestamp", "header"):
        total, overhead = measure(keys, strategy)
        print(f"{strategy:9s}: {total:6.1f} bytes/key in total, {overhead:6.1f} bytes/key of state")


if __name__ == "__main__":
    main()
