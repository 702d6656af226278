"""The notification service (asyncio): reads ``shipments``, writes one notification per shipment.

It runs on ``kheaders.aio``: an ``AIOConsumer`` in an ``async for`` loop, each shipment handled
inside ``process_span``, and an ``AIOProducer`` whose tracing interceptor runs in the handling
task, so each notification continues the trace the (synchronous) order and shipping services
began: the sync -> async hop the audit checks (see ``kheaders.demo.run_notifications``).

    KHEADERS_BOOTSTRAP=localhost:9094 python -m examples.notifications --count 200
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

from examples._common import connect, parser
from kheaders.broker import create_topic
from kheaders.demo import (
    NOTIFICATION_CLIENT_ID,
    NOTIFICATIONS_TOPIC,
    run_notifications,
    setup_tracing,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Notify ``--count`` shipments (0: until ``--timeout``); 0 when each got its notification."""
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--notifications-topic", default=NOTIFICATIONS_TOPIC)
    p.add_argument("--group", default="notifications", help="consumer group")
    args = p.parse_args(argv)
    bootstrap = connect(args)
    create_topic(bootstrap, args.notifications_topic, partitions=args.partitions)
    provider = setup_tracing(NOTIFICATION_CLIENT_ID)
    try:
        stats = asyncio.run(
            run_notifications(
                bootstrap,
                expected=args.count or None,
                timeout=args.timeout,
                shipments_topic=args.shipments_topic,
                notifications_topic=args.notifications_topic,
                group_id=args.group,
                tracer_provider=provider,
            )
        )
    finally:
        provider.shutdown()
    print(
        f"notifications: {stats.consumed} shipments read, {stats.produced} notifications"
        f" delivered, {stats.failed} failed",
        flush=True,
    )
    return 0 if stats.failed == 0 and stats.produced == stats.consumed else 1


if __name__ == "__main__":
    sys.exit(main())
