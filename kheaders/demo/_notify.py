"""The demo's asyncio service: notifications, one per shipment, on ``kheaders.aio``.

It reads what the (synchronous) shipping service writes and answers with a notification in
the same trace: the hop between a sync and an async service that the demo's audit checks.
Each shipment is handled inside ``process_span`` in an ``async for`` loop; the async producer
runs the tracing interceptor in the handling task, so the notification continues the
shipment's trace (and so the order's). Like the other services it names its interceptors in
its client configs and uses only kheaders' public API.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

from confluent_kafka import TopicPartition
from opentelemetry import trace

from kheaders import JsonDeserializer, JsonSerializer
from kheaders.aio import AIOConsumer, AIOProducer
from kheaders.demo._services import (
    SHIPMENTS_TOPIC,
    ServiceStats,
    service_consumer_config,
    service_producer_config,
)

NOTIFICATIONS_TOPIC = "notifications"
"""Where the notification service writes (one notification per shipment it reads)."""
NOTIFICATION_CLIENT_ID = "notification-service"

_PRODUCER_INTERCEPTORS = (
    "kheaders.interceptors.tracing.TracingProducerInterceptor",
    "kheaders.interceptors.client_id.ClientIdInterceptor",
    "kheaders.interceptors.correlation.CorrelationIdInterceptor",
)
_CONSUMER_INTERCEPTORS = (
    "kheaders.interceptors.tracing.TracingConsumerInterceptor",
    "kheaders.interceptors.correlation.CorrelationIdInterceptor",
)


async def run_notifications(
    bootstrap: str,
    *,
    expected: int | None = None,
    timeout: float = 60.0,
    shipments_topic: str = SHIPMENTS_TOPIC,
    notifications_topic: str = NOTIFICATIONS_TOPIC,
    client_id: str = NOTIFICATION_CLIENT_ID,
    group_id: str = "notifications",
    tracer_provider: trace.TracerProvider | None = None,
    ready: threading.Event | None = None,
) -> ServiceStats:
    """The notification service: for each shipment read, one notification in the same trace.

    Stops after ``expected`` shipments or ``timeout`` seconds; ``ready`` is set once the group
    assigned partitions to it. Every notification's delivery is awaited before it returns.
    """
    from kheaders.interceptors.correlation import correlation_scope
    from kheaders.interceptors.tracing import process_span

    tracer = (tracer_provider or trace.get_tracer_provider()).get_tracer("kheaders.demo.notify")
    consumer = AIOConsumer(
        service_consumer_config(bootstrap, group_id, client_id, _CONSUMER_INTERCEPTORS),
        value_deserializer=JsonDeserializer(),
    )
    producer = AIOProducer(
        service_producer_config(bootstrap, client_id, _PRODUCER_INTERCEPTORS),
        value_serializer=JsonSerializer(),
    )

    def on_assign(_consumer: object, partitions: list[TopicPartition]) -> None:
        if ready is not None and partitions:
            ready.set()

    consumed = 0
    deliveries: list[asyncio.Future[Any]] = []

    async def handle_all() -> None:
        nonlocal consumed
        async for msg in consumer:
            if msg.error() is not None:
                continue
            consumed += 1
            with process_span(msg, tracer, consumer_group=group_id), correlation_scope(msg):
                shipment = msg.value()
                note = {
                    "notification": uuid.uuid4().hex,
                    "shipment": shipment.get("shipment") if isinstance(shipment, dict) else None,
                    "order": shipment.get("order") if isinstance(shipment, dict) else None,
                    "text": "your order has shipped",
                }
                deliveries.append(await producer.produce(notifications_topic, note, msg.key()))
            if expected is not None and consumed >= expected:
                return

    await consumer.subscribe([shipments_topic], on_assign=on_assign)
    try:
        await asyncio.wait_for(handle_all(), timeout)
    except TimeoutError:
        pass  # counted below: fewer read than expected
    finally:
        await consumer.close()
        await producer.close(10.0)
    outcomes = await asyncio.gather(*deliveries, return_exceptions=True)
    failed = sum(1 for o in outcomes if isinstance(o, BaseException))
    return ServiceStats(consumed, len(outcomes) - failed, failed)  # purged ones failed too
