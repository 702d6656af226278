"""The demo's services: an order service, a shipping service and an audit reader.

They talk only through Kafka and use only kheaders' public API. Interceptors are named in the
client config (``interceptor.classes``), the way an application would, so kheaders finds them
by dotted name at run time; ``process_span`` and ``correlation_scope`` are imported from the
``interceptors`` package inside :func:`run_shipping`, the one place that needs them. Nothing
here is imported by ``import kheaders``: ``kheaders.demo`` and ``kheaders demo`` load it.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from confluent_kafka import OFFSET_BEGINNING, KafkaError, Message, TopicPartition
from opentelemetry import trace

from kheaders import (
    ConfigurationError,
    Consumer,
    DeserializationError,
    HeldFailuresError,
    JsonDeserializer,
    JsonSerializer,
    Producer,
)
from kheaders.broker import BOOTSTRAP_ENV, fast_consumer_config
from kheaders.deadletter import DeadLetterPublisher

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider

ORDERS_TOPIC = "orders"
"""Where the order service writes (one record per order event)."""
SHIPMENTS_TOPIC = "shipments"
"""Where the shipping service writes (one shipment per order record it reads)."""
ORDERS_CLIENT_ID = "orders-service"
SHIPPING_CLIENT_ID = "shipping-service"
VERSION_HEADER = "version"
"""The KIP-280 version header the order service stamps (hybrid logical clock, ``long``)."""

_PRODUCER_INTERCEPTORS = (
    "kheaders.interceptors.tracing.TracingProducerInterceptor",
    "kheaders.interceptors.client_id.ClientIdInterceptor",
    "kheaders.interceptors.correlation.CorrelationIdInterceptor",
    "kheaders.interceptors.metrics.MetricsProducerInterceptor",
)
_VERSION_STAMP = "kheaders.interceptors.versioning.VersionStampInterceptor"
_CONSUMER_INTERCEPTORS = (
    "kheaders.interceptors.tracing.TracingConsumerInterceptor",
    "kheaders.interceptors.correlation.CorrelationIdInterceptor",
    "kheaders.interceptors.metrics.MetricsConsumerInterceptor",
)


def service_producer_config(
    bootstrap: str, client_id: str, interceptors: tuple[str, ...], **extra: Any
) -> dict[str, Any]:
    """A demo service's producer settings: its ``client.id`` and ``interceptors``, tracing in
    propagate mode, the demo's app name, 5 ms linger; ``extra`` settings on top."""
    return {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "interceptor.classes": ",".join(interceptors),
        "kheaders.tracing.mode": "propagate",
        "kheaders.app.name": "kheaders-demo",
        "linger.ms": 5,
        **extra,
    }


def service_consumer_config(
    bootstrap: str, group_id: str, client_id: str, interceptors: tuple[str, ...]
) -> dict[str, Any]:
    """A demo service's consumer settings: a quick group join, its ``client.id`` and
    ``interceptors``."""
    return fast_consumer_config(
        bootstrap,
        group_id,
        **{"client.id": client_id, "interceptor.classes": ",".join(interceptors)},
    )


def bootstrap_from_env(explicit: str | None = None) -> str:
    """``explicit`` when given, else ``$KHEADERS_BOOTSTRAP``.

    Raises ConfigurationError when neither names a broker.
    """
    value = explicit or os.environ.get(BOOTSTRAP_ENV, "").strip()
    if not value:
        raise ConfigurationError(f"no broker: pass --bootstrap or set {BOOTSTRAP_ENV}")
    return value


def setup_tracing(service_name: str, *, set_global: bool = True) -> SdkTracerProvider:
    """An OpenTelemetry SDK TracerProvider for ``service_name`` (made global unless told not to).

    With ``OTEL_EXPORTER_OTLP_ENDPOINT`` set and ``opentelemetry-exporter-otlp`` importable,
    spans are exported there over OTLP/gRPC in batches; otherwise they are recorded, not exported.

    Raises ConfigurationError when the SDK (``opentelemetry-sdk``, extra ``kheaders[demo]``)
    is missing: without it no span is recorded and no trace context would reach the records.
    """
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError as exc:
        raise ConfigurationError(
            "the demo needs opentelemetry-sdk: pip install 'kheaders[demo]'"
        ) from exc
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        try:  # optional: installed in the Docker image, not a kheaders dependency
            otlp = importlib.import_module("opentelemetry.exporter.otlp.proto.grpc.trace_exporter")
        except ImportError:
            pass  # no exporter installed: spans stay in-process
        else:
            provider.add_span_processor(BatchSpanProcessor(otlp.OTLPSpanExporter()))
    if set_global:
        trace.set_tracer_provider(provider)
    return provider


def _tracer(provider: trace.TracerProvider | None, name: str) -> trace.Tracer:
    return (provider or trace.get_tracer_provider()).get_tracer(name)


@dataclass(frozen=True, slots=True)
class ServiceStats:
    """What a service did: records read, records written (delivered), delivery failures, and
    records it could not decode (republished to ``<topic>-dlt``)."""

    consumed: int = 0
    produced: int = 0
    failed: int = 0
    dead_lettered: int = 0

    def __str__(self) -> str:
        return (
            f"read {self.consumed}, delivered {self.produced}, failed {self.failed},"
            f" dead-lettered {self.dead_lettered}"
        )


def order_key(index: int) -> str:
    """The key of order event ``index``: two events (created, confirmed) per order.

    >>> order_key(0), order_key(1), order_key(2)
    ('order-00000', 'order-00000', 'order-00001')
    """
    return f"order-{index // 2:05d}"


def produce_orders(
    bootstrap: str,
    count: int,
    *,
    topic: str = ORDERS_TOPIC,
    client_id: str = ORDERS_CLIENT_ID,
    tracer_provider: trace.TracerProvider | None = None,
    timeout: float = 30.0,
) -> ServiceStats:
    """The order service: write ``count`` order events as JSON, one ``create order`` span each.

    Events alternate ``created``/``confirmed`` per order key (so the version header makes
    compaction keep ``confirmed``). Interceptors: trace context (propagate mode: the record
    carries this service's span), ``client.id``, ``correlation.id`` and the ``version`` stamp.
    Returns the counts once every record is delivered or ``timeout`` passed.
    """
    config = service_producer_config(
        bootstrap,
        client_id,
        (*_PRODUCER_INTERCEPTORS, _VERSION_STAMP),
        **{
            "kheaders.metrics.duration.max.per.second": 0,  # time every delivery (a demo)
            "compaction.strategy.header": VERSION_HEADER,
        },
    )
    delivered = [0, 0]

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        delivered[0 if err is None else 1] += 1

    tracer = _tracer(tracer_provider, "kheaders.demo.orders")
    producer = Producer(config, value_serializer=JsonSerializer())
    try:
        for index in range(count):
            key = order_key(index)
            status = "created" if index % 2 == 0 else "confirmed"
            with tracer.start_as_current_span("create order", attributes={"order.key": key}):
                order = {"order": key, "event": index, "status": status, "amount": 10 + index}
                producer.produce(topic, order, key, on_delivery=on_delivery)
            producer.poll(0)
    finally:
        producer.close(timeout)  # records left are purged: on_delivery counts them as failed
    return ServiceStats(consumed=0, produced=delivered[0], failed=delivered[1])


def run_shipping(
    bootstrap: str,
    *,
    expected: int | None = None,
    timeout: float = 60.0,
    idle_timeout: float | None = None,
    orders_topic: str = ORDERS_TOPIC,
    shipments_topic: str = SHIPMENTS_TOPIC,
    client_id: str = SHIPPING_CLIENT_ID,
    group_id: str = "shipping",
    tracer_provider: trace.TracerProvider | None = None,
    stop: threading.Event | None = None,
    skip: Callable[[Message], bool] | None = None,
    ready: threading.Event | None = None,
) -> ServiceStats:
    """The shipping service: for each order read, write one shipment in the same trace.

    Each record is handled inside ``process_span`` (a child of the order's creation context),
    so the shipment's ``traceparent`` continues the order's trace; the order's
    ``correlation.id`` is inherited. Stops after ``expected`` records, after ``timeout``
    seconds, after ``idle_timeout`` seconds without a record, or when ``stop`` is set.
    ``skip(msg)`` drops a record without shipping it (fault injection for the demo's tests);
    ``ready`` is set once the group has assigned partitions to this service. An order that
    is not JSON is republished as it came to ``<orders topic>-dlt`` (created at start with
    the orders topic's partition count) and counted, never lost. Raises ConfigurationError
    when that topic is missing and cannot be created.
    """
    from kheaders.interceptors.correlation import correlation_scope
    from kheaders.interceptors.metrics import process_metrics, with_statistics
    from kheaders.interceptors.tracing import process_span

    tracer = _tracer(tracer_provider, "kheaders.demo.shipping")
    consumer = Consumer(
        with_statistics(  # librdkafka's statistics (consumer lag) as metrics, every second
            service_consumer_config(bootstrap, group_id, client_id, _CONSUMER_INTERCEPTORS),
            interval_ms=1000,
        ),
        value_deserializer=JsonDeserializer(),
    )
    producer = Producer(
        service_producer_config(
            bootstrap,
            client_id,
            _PRODUCER_INTERCEPTORS,
            **{"kheaders.metrics.duration.max.per.second": 0},
        ),
        value_serializer=JsonSerializer(),
    )
    dead_letters = DeadLetterPublisher(producer, group_id=group_id)
    dead_letters.prepare({"bootstrap.servers": bootstrap}, [orders_topic])  # created, or refused
    consumed = dead = 0
    delivered = [0, 0]

    def on_delivery(err: KafkaError | None, _msg: Message) -> None:
        delivered[0 if err is None else 1] += 1

    deadline = time.monotonic() + timeout
    last_seen = time.monotonic()

    def on_assign(_consumer: object, partitions: list[TopicPartition]) -> None:
        if ready is not None and partitions:
            ready.set()

    consumer.subscribe([orders_topic], on_assign=on_assign)
    try:
        while time.monotonic() < deadline and (expected is None or consumed < expected):
            if stop is not None and stop.is_set():
                break
            if idle_timeout is not None and time.monotonic() - last_seen > idle_timeout:
                break
            try:
                msg = consumer.poll(0.2)
            except DeserializationError as err:
                consumed += 1
                dead += 1
                dead_letters.publish(err)
                continue
            producer.poll(0)
            if msg is None or msg.error() is not None:
                continue
            consumed += 1
            last_seen = time.monotonic()
            if skip is not None and skip(msg):
                continue
            with (
                process_span(msg, tracer, consumer_group=group_id),
                correlation_scope(msg),
                process_metrics(msg, consumer_group=group_id),
            ):
                order = msg.value()
                order_id = order.get("order") if isinstance(order, dict) else None
                shipment = {"shipment": uuid.uuid4().hex, "order": order_id, "status": "shipped"}
                producer.produce(shipments_topic, shipment, msg.key(), on_delivery=on_delivery)
    finally:
        producer.close(max(1.0, deadline - time.monotonic()))  # on_delivery counts purged ones
        consumer.close()
    return ServiceStats(consumed, delivered[0], delivered[1], dead)


def read_topics(
    bootstrap: str,
    topics: dict[str, int | None],
    *,
    timeout: float = 60.0,
    idle_timeout: float | None = None,
    stop: threading.Event | None = None,
) -> list[Message]:
    """The audit reader: every record of ``topics`` from the beginning, by ``assign()`` (no group).

    ``topics`` maps each topic to the number of records to wait for (``None``: read until
    ``idle_timeout`` seconds pass without a record). Returns when every count is reached, on
    ``timeout``, on ``idle_timeout`` or when ``stop`` is set; records keep raw values. A record
    whose headers cannot be read (a non-UTF-8 key) is kept, with no headers: the audit then
    reports its trace as broken.
    """
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"kheaders-audit-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "client.id": "audit-service",
        }
    )
    seen = dict.fromkeys(topics, 0)
    records: list[Message] = []
    deadline = time.monotonic() + timeout
    try:
        consumer.assign(_all_partitions(consumer, list(topics), deadline))
        last_seen = time.monotonic()
        while time.monotonic() < deadline:
            if stop is not None and stop.is_set():
                break
            wanted = [t for t, n in topics.items() if n is None or seen[t] < n]
            if not wanted or (
                idle_timeout is not None and time.monotonic() - last_seen > idle_timeout
            ):
                break
            try:
                batch = consumer.consume(500, 0.2)
            except DeserializationError as err:  # unreadable headers: kept, with none
                batch = [err.message]
            for msg in batch:
                if msg.error() is None:
                    seen[msg.topic() or ""] = seen.get(msg.topic() or "", 0) + 1
                    records.append(msg)
                    last_seen = time.monotonic()
    finally:
        try:
            consumer.close()
        except HeldFailuresError as held:  # kept by consume() until close: kept, with none
            records.extend(
                f.message for f in held.exceptions if isinstance(f, DeserializationError)
            )
    return records


def _all_partitions(consumer: Consumer, topics: list[str], deadline: float) -> list[TopicPartition]:
    """Every partition of ``topics`` at the beginning; waits for topics to appear in metadata."""
    while True:
        meta = consumer.list_topics(timeout=5.0).topics
        missing = [t for t in topics if t not in meta or meta[t].error is not None]
        if not missing:
            return [
                TopicPartition(t, p, OFFSET_BEGINNING) for t in topics for p in meta[t].partitions
            ]
        if time.monotonic() > deadline:
            raise ConfigurationError(f"topics not found: {', '.join(missing)}")
        time.sleep(0.5)
