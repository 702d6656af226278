"""The AdminClients kheaders builds for its own tasks, with librdkafka's lines in its log.

An AdminClient hands librdkafka's lines to its ``logger`` only when polled, which nobody does
while waiting on its futures: :func:`admin_client` serves them (and the repeats counted) when
the block ends, so an unreachable cluster is told (``broker.unreachable``) before the error
that follows, and nothing reaches stderr.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from confluent_kafka.admin import AdminClient

from kheaders._client.clientlog import client_log, route_client_log


@contextlib.contextmanager
def admin_client(config: Mapping[str, object]) -> Iterator[AdminClient]:
    """An ``AdminClient`` built from ``config`` with kheaders' :class:`LibrdkafkaLog` (unless
    ``config`` names a ``logger``); its lines are served when the block ends, however it ends.

    Raises what ``AdminClient(config)`` raises (KafkaException for a bad setting).
    """
    routed = route_client_log(config)
    admin = AdminClient(routed)  # type: ignore[arg-type] # its stubs leave out `logger`
    try:
        yield admin
    finally:
        with contextlib.suppress(Exception):  # the block's own error matters more
            admin.poll(0)
        log = client_log(routed)
        if log is not None:
            log.flush()
