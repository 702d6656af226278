"""asyncio clients with headers, interceptors, serializers and trace context, on librdkafka.

:class:`AIOProducer` and :class:`AIOConsumer` run kheaders' own Producer and Consumer (the
same interceptor chain, serializers, header limits and record rules) with every call that
can wait on the network off the event loop. See docs/aio.md. ``AIOProcessor`` lives in
:mod:`kheaders.processing` (one engine, several drivers) and is re-exported here.
"""

import importlib as _importlib
from typing import Any as _Any

from kheaders import _public
from kheaders.aio._consumer import AIOConsumer
from kheaders.aio._producer import AIOProducer

__all__ = ["AIOConsumer", "AIOProcessor", "AIOProducer"]
_public.claim(__name__, {**globals(), "__all__": ["AIOConsumer", "AIOProducer"]})


def __getattr__(name: str) -> _Any:
    """``AIOProcessor``: kheaders.processing's, resolved at run time (processing stands on
    this package, not the other way round)."""
    if name == "AIOProcessor":
        return _importlib.import_module("kheaders.processing").AIOProcessor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
