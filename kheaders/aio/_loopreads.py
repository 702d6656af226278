"""When the async consumer may read records on the event loop's thread, and how often it
gives the loop a turn while it does.

A zero-timeout read never waits on the network, but librdkafka serves its consumer queue
in that call: besides records, the results and events that confluent-kafka turns into
Python callbacks. Those whose result librdkafka ignores (``error_cb``, ``throttle_cb``,
``stats_cb``, a config ``on_commit``: :data:`FORWARDED`) are handed to the worker thread
when a read on the loop thread serves them, so they still run where they are documented to
run, in order. A read on the loop thread is not allowed at all when it could run anything
else: a rebalance callback (a coroutine one is run on the loop while the calling thread
waits for it: on the loop thread, a deadlock), ``oauth_cb`` (its token is needed at once,
typically fetched over the network), a ``logger``, an interceptor's ``on_commit``, or a
deserializer that is not one of kheaders' built-ins (a user's, e.g. a schema registry
lookup on a cache miss, may wait on the network). Interceptors' ``on_consume`` runs in the
read, as ``on_send`` runs in ``produce``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from kheaders._client.consumer import Consumer, deserializers_of
from kheaders._serde.builtin import (
    BytesDeserializer,
    DoubleDeserializer,
    IntegerDeserializer,
    LongDeserializer,
    StringDeserializer,
)
from kheaders._serde.json import JsonDeserializer

TURN_AFTER = 0.005
"""Seconds after which a read on the loop thread first gives the loop a turn (``sleep(0)``)
when the consumer did not wait since: a task reading a topic that never runs dry (and
handling its records without awaiting) still lets timers and other tasks run."""

FORWARDED = ("error_cb", "throttle_cb", "stats_cb", "on_commit")
"""Config callbacks a read serves whose result librdkafka ignores: a read on the loop thread
hands them to the worker thread."""
BLOCKING = ("oauth_cb", "logger")
"""Config keys naming code a read serves that cannot be handed on: no reads on the loop."""

_LOCAL_DESERIALIZERS = (
    BytesDeserializer,
    DoubleDeserializer,
    IntegerDeserializer,
    JsonDeserializer,
    LongDeserializer,
    StringDeserializer,
)
"""kheaders' deserializers that only compute (exact types: a subclass may do more)."""


def _local(deserialize: Callable[..., object] | None) -> bool:
    owner = getattr(deserialize, "__self__", None)
    return deserialize is None or type(owner) in _LOCAL_DESERIALIZERS


def loop_reads_allowed(config: Mapping[str, object], consumer: Consumer) -> bool:
    """Whether reads of records already held may run on the loop thread (see the module
    doc); rebalance callbacks, given later to ``subscribe``, are checked there."""
    if any(config.get(name) is not None for name in BLOCKING):
        return False
    if consumer.interceptors.on_commit:
        return False
    return all(_local(d) for d in deserializers_of(consumer))


def forwarding(
    callback: Callable[..., object], forward: Callable[..., object]
) -> Callable[..., None]:
    """``callback`` for librdkafka: called as it is on any thread but the current one (the
    loop's), handed to ``forward(callback, *args)`` there."""
    loop_thread = threading.get_ident()

    def call(*args: object) -> None:
        if threading.get_ident() == loop_thread:
            forward(callback, *args)
        else:
            callback(*args)

    return call
