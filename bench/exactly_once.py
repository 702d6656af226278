"""The exactly-once processor's cost against the at-least-once one, same client, one run.

    python -m bench.exactly_once [--records N] [--rounds R] [--batch-size B] [--bootstrap HOST:PORT]

Both contenders are ``kheaders.processing`` drivers on the same kheaders Consumer and
Producer, reading the same topic (one partition, 3 headers, 100-byte values, filled once)
with a fresh consumer group each time, a no-op handler, ``batch_size`` records per consume:

* ``Processor``: at-least-once, offsets committed asynchronously once a second;
* ``ExactlyOnceProcessor``: a transaction per batch (``begin_transaction``, the batch,
  ``send_offsets_to_transaction``, ``commit_transaction``), the consumer ``read_committed``;
* ``ExactlyOnceProcessor + emit``: the same, each record emitting one output (what an
  exactly-once service is for) into the batch's transaction;
* ``ExactlyOnceProcessor, batch 4B``: four times the batch, a quarter of the transactions.

The clock runs from the first record handled to the last (group joins and
``init_transactions`` are left out). Apache Kafka runs here (``--bootstrap`` for another):
Tansu's transactions are not the reference's (FIELD-NOTES). Rounds alternate the
contenders; medians are reported, and the ratios to the at-least-once Processor.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from bench._contest import Clock, Contender, arguments, broker, contest, fill
from bench.processing import _config, _noop
from kheaders.broker import create_topic
from kheaders.processing import ExactlyOnceProcessor, Processor, emit


def _run(processor: Processor, clock: Clock) -> tuple[float, float]:
    runner = threading.Thread(target=processor.run)
    runner.start()
    clock.done.wait()
    processor.stop()
    runner.join()
    return clock.rate()


def at_least_once(bootstrap: str, topic: str, n: int, batch: int) -> tuple[float, float]:
    clock = Clock(n)
    proc = Processor(
        _config(bootstrap), [topic], _noop(clock), batch_size=batch, handle_signals=False
    )
    return _run(proc, clock)


def exactly_once(
    bootstrap: str, topic: str, n: int, batch: int, out: str | None
) -> tuple[float, float]:
    clock = Clock(n)
    handler: Callable[[Any], None] = _noop(clock)
    if out is not None:
        tick = handler

        def handler(msg: Any) -> None:
            emit(out, msg.value(), msg.key())
            tick(msg)

    proc = ExactlyOnceProcessor(
        _config(bootstrap),
        [topic],
        handler,
        transactional_id=f"bench-{uuid.uuid4().hex[:8]}",
        batch_size=batch,
        handle_signals=False,
    )
    return _run(proc, clock)


def main() -> None:
    args = arguments(__doc__, 100_000, batch_size=500)
    with broker(args.bootstrap, apache=True) as bootstrap:
        n, batch = args.records, args.batch_size
        topic = fill(bootstrap, n)
        out = create_topic(bootstrap, f"bench-eos-out-{uuid.uuid4().hex[:8]}", partitions=1)
        contenders: dict[str, Contender] = {
            "Processor (at-least-once)": lambda: at_least_once(bootstrap, topic, n, batch),
            "ExactlyOnceProcessor": lambda: exactly_once(bootstrap, topic, n, batch, None),
            "ExactlyOnceProcessor + emit": lambda: exactly_once(bootstrap, topic, n, batch, out),
            f"ExactlyOnceProcessor, batch {4 * batch}": lambda: exactly_once(
                bootstrap, topic, n, 4 * batch, None
            ),
        }
        heading = (
            f"{n:,} records, 1 partition, 3 headers, no-op handler, batch_size {batch},"
            f" {args.rounds} rounds; transactions per run: {-(-n // batch):,} at most"
        )
        contest(contenders, args.rounds, heading)


if __name__ == "__main__":
    main()
