"""When the async consumer may read records on the event loop's thread, and how often it
gives the loop a turn while it does.

A zero-timeout read never waits on the network, but librdkafka serves its consumer queue
in that call: besides records, the results and events that confluent-kafka turns into
Python callbacks. A read on the loop thread is allowed only when none of those can run
there: no rebalance callback (a coroutine one is run on the loop while the calling thread
waits for it: on the loop thread, a deadlock), no config callback (``error_cb``,
``stats_cb``, ``throttle_cb``, ``oauth_cb``, ``on_commit``, an interceptor's ``on_commit``,
a ``logger``: user code documented to run on the worker thread, ``oauth_cb`` typically
fetching a token over the network), and deserializers that are kheaders' built-ins (a
user's, e.g. a schema registry lookup on a cache miss, may wait on the network).
Interceptors' ``on_consume`` runs in the read, as ``on_send`` runs in ``produce``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kheaders._client.consumer import Consumer
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

SERVED_CALLBACKS = ("error_cb", "throttle_cb", "stats_cb", "oauth_cb", "on_commit", "logger")
"""Config keys naming Python code librdkafka calls from inside a consumer read."""

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
    if any(config.get(name) is not None for name in SERVED_CALLBACKS):
        return False
    if consumer.interceptors.on_commit:
        return False
    # the bound methods the kheaders Consumer calls (its own package's private state)
    return _local(consumer._key_de) and _local(consumer._value_de)
