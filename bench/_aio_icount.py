"""``python -m bench._aio_icount BUILT HANDLED CONCURRENCY``: the child bench.processing
``--icount`` runs under callgrind. An AIOProcessor's loop side on fake records, no broker:
the engine's steps for batches of 500 carried out (lanes and workers included) until every
record was handled. ``BUILT`` records are made whatever ``HANDLED`` is, so two runs differ
only by the handling; 600 warm-up records come first in both.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from typing import Any

from confluent_kafka import Message

from bench._contest import HEADERS, VALUE
from kheaders._model.headers import received
from kheaders.aio import AIOProcessor
from kheaders.processing import _steps as s
from kheaders.processing._base import now_ms

WARM = 600


def _record(i: int) -> Message:
    key = str(i % 1000).encode()
    return Message(
        topic="t", partition=0, offset=i, key=key, value=VALUE,
        headers=received(HEADERS),  # type: ignore[arg-type]  # (all bytes)
        timestamp=(1, 1),
    )  # fmt: skip


async def _run(built: int, handled: int, concurrency: int) -> None:
    records = [_record(i) for i in range(WARM + built)]
    count = 0

    async def handler(_msg: Any) -> None:
        nonlocal count
        count += 1

    config = {"bootstrap.servers": "localhost:1", "group.id": "icount"}
    proc = AIOProcessor(
        config, ["t"], handler, concurrency=concurrency, handle_signals=False, commit_interval=1e6
    )
    if concurrency > 1:  # what _run_all sets up, without the clients
        proc._lanes = [deque() for _ in range(concurrency)]
        proc._queued = [0] * concurrency
        proc._fed, proc._room = asyncio.Event(), asyncio.Event()
        workers = [asyncio.create_task(proc._lane(i)) for i in range(concurrency)]
    engine, total = proc._engine, WARM + handled
    for start in range(0, total, 500):
        await proc._carry(engine.send(s.Tick(now_ms())))
        await proc._carry(engine.send(s.Polled(records[start : min(start + 500, total)], now_ms())))
    while count < total:
        await asyncio.sleep(0)
    if concurrency > 1:
        for worker in workers:
            worker.cancel()
    if engine.offsets.open_count():
        raise SystemExit("records left in hand")


if __name__ == "__main__":
    built, handled, concurrency = (int(a) for a in sys.argv[1:4])
    asyncio.run(_run(built, handled, concurrency))
