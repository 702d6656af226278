"""asyncio clients with headers, interceptors, serializers and trace context, on librdkafka.

:class:`AIOProducer` and :class:`AIOConsumer` run kheaders' own Producer and Consumer (the
same interceptor chain, serializers, header limits and record rules) with every call that
can wait on the network off the event loop. See docs/aio.md.
"""

from kheaders import _public
from kheaders.aio._consumer import AIOConsumer
from kheaders.aio._processor import AIOProcessor
from kheaders.aio._producer import AIOProducer

__all__ = ["AIOConsumer", "AIOProcessor", "AIOProducer"]
_public.claim(__name__, globals())
