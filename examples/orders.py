"""The order service: writes order events to ``orders`` as JSON, one span per order.

Its producer names its interceptors in the config (see ``kheaders.demo.produce_orders``):
trace context in propagate mode (each record carries the service's own ``create order``
span), ``client.id``, ``correlation.id`` and a KIP-280 ``version`` stamp.

    KHEADERS_BOOTSTRAP=localhost:9094 python -m examples.orders --count 200
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from examples._common import connect, parser
from kheaders.demo import ORDERS_CLIENT_ID, produce_orders, setup_metrics, setup_tracing


def main(argv: Sequence[str] | None = None) -> int:
    """Produce ``--count`` order events; 0 when all were delivered."""
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    bootstrap = connect(args)
    provider = setup_tracing(ORDERS_CLIENT_ID)
    metrics = setup_metrics(ORDERS_CLIENT_ID)  # exported over OTLP when an endpoint is set
    try:
        stats = produce_orders(
            bootstrap,
            args.count,
            topic=args.orders_topic,
            tracer_provider=provider,
            timeout=args.timeout,
        )
    finally:
        provider.shutdown()  # flush spans to the exporter
        if metrics is not None:
            metrics.provider.shutdown()  # and the metrics
    print(
        f"orders: {stats.produced} delivered to {args.orders_topic}, {stats.failed} failed",
        flush=True,
    )
    return 0 if stats.failed == 0 and stats.produced == args.count else 1


if __name__ == "__main__":
    sys.exit(main())
