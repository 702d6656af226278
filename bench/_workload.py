"""The records every contender sends: 100-byte values, 3 headers, keys from a set of 1,000.

Everything is generated up front (seeded, so every run sees the same data), as per-record
lists that the timed loops only zip through: no contender pays for making its inputs.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import lru_cache

VALUE_SIZE = 100
KEY_COUNT = 1000
POOL = 1024
"""Distinct values, traceparents and payloads cycled through."""

TRACEPARENT = "traceparent"
CLIENT_ID = "client.id"
CONTENT_TYPE = "content-type"
CLIENT_ID_VALUE = b"bench-client"
OCTET_STREAM = b"application/octet-stream"
JSON_TYPE = b"application/json"

HeaderList = list[tuple[str, bytes]]


def _traceparent(rng: random.Random) -> bytes:
    trace_id = rng.getrandbits(128) or 1
    span_id = rng.getrandbits(64) or 1
    return b"00-%032x-%016x-01" % (trace_id, span_id)


def _payload(rng: random.Random, i: int) -> dict[str, object]:
    """A small order event; JSON-encoded it is about 100 bytes."""
    return {
        "order": 100_000 + i,
        "customer": f"cust-{rng.randrange(10_000):05d}",
        "amount": round(rng.uniform(1, 999), 2),
        "currency": "EUR",
        "items": rng.randrange(1, 9),
        "status": "created",
    }


@dataclass(frozen=True)
class Workload:
    """Per-record inputs (index ``i`` of every list belongs to record ``i``)."""

    keys: list[bytes]
    values: list[bytes]
    headers: list[HeaderList]
    payloads: list[dict[str, object]]

    def __len__(self) -> int:
        return len(self.keys)


@lru_cache(maxsize=4)
def workload(records: int, seed: int = 82) -> Workload:
    """``records`` records; lists share their (immutable) elements, so this is cheap."""
    rng = random.Random(seed)
    key_set = [b"key-%04d" % k for k in range(KEY_COUNT)]
    values = [rng.randbytes(VALUE_SIZE) for _ in range(POOL)]
    headers = [
        [
            (TRACEPARENT, _traceparent(rng)),
            (CLIENT_ID, CLIENT_ID_VALUE),
            (CONTENT_TYPE, OCTET_STREAM),
        ]
        for _ in range(POOL)
    ]
    payloads = [_payload(rng, i) for i in range(POOL)]
    return Workload(
        keys=[key_set[rng.randrange(KEY_COUNT)] for _ in range(records)],
        values=[values[i % POOL] for i in range(records)],
        headers=[headers[i % POOL] for i in range(records)],
        payloads=[payloads[i % POOL] for i in range(records)],
    )


def payload_size() -> float:
    """The mean JSON size of the payloads (reported next to the results)."""
    rng = random.Random(82)
    sizes = [len(json.dumps(_payload(rng, i)).encode()) for i in range(POOL)]
    return sum(sizes) / len(sizes)
