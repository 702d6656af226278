"""Processing records: a consumer service loop with non-blocking retry topics on Spring
Kafka's header contract, dead letters of the consumed bytes and at-least-once commits.

:class:`Processor` runs a handler per record; :class:`RetryTopics` and :class:`DeadLetter`
say where failures go; :class:`AIOProcessor` is its asyncio driver (also importable from
``kheaders.aio``); :class:`ExactlyOnceProcessor` runs each batch in one Kafka transaction,
with the outputs the handler gives :func:`emit`. All carry out the steps of one engine free
of I/O (``_engine``), which makes every decision. See docs/processing.md.
"""

from kheaders import _public
from kheaders.processing import spring_headers
from kheaders.processing._aio import AIOProcessor
from kheaders.processing._core import HeadersFilter
from kheaders.processing._delivery import Delivery, delivery
from kheaders.processing._describe import describe
from kheaders.processing._exactly_once import ExactlyOnceProcessor
from kheaders.processing._failure import without_retry_state
from kheaders.processing._outputs import emit
from kheaders.processing._processor import Processor
from kheaders.processing._retry import KHEADERS, SPRING, DeadLetter, RetryTopics

__all__ = [
    "KHEADERS",
    "SPRING",
    "AIOProcessor",
    "DeadLetter",
    "Delivery",
    "ExactlyOnceProcessor",
    "HeadersFilter",
    "Processor",
    "RetryTopics",
    "delivery",
    "describe",
    "emit",
    "spring_headers",
    "without_retry_state",
]
_public.claim(__name__, globals())
