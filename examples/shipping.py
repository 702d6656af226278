"""The shipping service: reads ``orders`` and writes one shipment per order to ``shipments``.

Each order is processed inside ``process_span`` (a child of the order's creation context),
so the shipment continues the order's trace: one trace across both hops. The shipment
carries this service's own ``client.id`` and the order's ``correlation.id``
(see ``kheaders.demo.run_shipping``).

    KHEADERS_BOOTSTRAP=localhost:9094 python -m examples.shipping --count 200
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from examples._common import connect, parser
from kheaders.demo import SHIPPING_CLIENT_ID, run_shipping, setup_metrics, setup_tracing


def main(argv: Sequence[str] | None = None) -> int:
    """Ship ``--count`` orders (0: until ``--timeout``); 0 when every order read was shipped."""
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--group", default="shipping", help="consumer group (default shipping)")
    args = p.parse_args(argv)
    bootstrap = connect(args)
    provider = setup_tracing(SHIPPING_CLIENT_ID)
    metrics = setup_metrics(SHIPPING_CLIENT_ID)  # exported over OTLP when an endpoint is set
    try:
        stats = run_shipping(
            bootstrap,
            expected=args.count or None,
            timeout=args.timeout,
            orders_topic=args.orders_topic,
            shipments_topic=args.shipments_topic,
            group_id=args.group,
            tracer_provider=provider,
        )
    finally:
        provider.shutdown()
        if metrics is not None:
            metrics.provider.shutdown()
    print(
        f"shipping: {stats.consumed} orders read, {stats.produced} shipments delivered,"
        f" {stats.failed} failed, {stats.dead_lettered} dead-lettered",
        flush=True,
    )
    shipped_all = stats.produced + stats.dead_lettered == stats.consumed
    return 0 if stats.failed == 0 and shipped_all else 1


if __name__ == "__main__":
    sys.exit(main())
