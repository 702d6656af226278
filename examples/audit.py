"""The audit: reads ``orders`` and ``shipments`` and reports per trace id.

With ``--notifications-topic`` it also reads what the asyncio notification service wrote and
audits that hop too (shipments -> notifications: sync to async, the same traces).

For each trace: the hops (topic, partition, offset), the client id of each hop and the
latency between hops (record timestamps); then records counted in and out. Exits 1 when a
record is missing or a trace is broken (see ``kheaders.demo.audit``).

    KHEADERS_BOOTSTRAP=localhost:9094 python -m examples.audit --count 200
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from examples._common import connect, parser
from kheaders.demo import audit, audit_record, format_audit, read_topics


def main(argv: Sequence[str] | None = None) -> int:
    """Wait for ``--count`` orders and shipments, print the report; 0 when it is clean."""
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--show", type=int, default=None, help="trace lines to print (default all)")
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        help="stop after this long without a record (default: wait for --count)",
    )
    p.add_argument("--notifications-topic", default=None, help="also audit this hop")
    args = p.parse_args(argv)
    bootstrap = connect(args)
    names = [args.orders_topic, args.shipments_topic]
    if args.notifications_topic:
        names.append(args.notifications_topic)
    topics: dict[str, int | None] = dict.fromkeys(names, args.count)
    records = [
        audit_record(m)
        for m in read_topics(
            bootstrap, topics, timeout=args.timeout, idle_timeout=args.idle_timeout
        )
    ]
    report = audit(records, args.orders_topic, args.shipments_topic, args.count)
    print(format_audit(report, args.show), flush=True)
    if not args.notifications_topic:
        return 0 if report.ok else 1
    hop = audit(records, args.shipments_topic, args.notifications_topic, args.count)
    print(format_audit(hop, 0), flush=True)
    return 0 if report.ok and hop.ok else 1


if __name__ == "__main__":
    sys.exit(main())
