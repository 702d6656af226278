"""Processing records: a consumer service loop with non-blocking retry topics on Spring
Kafka's header contract, dead letters of the consumed bytes and at-least-once commits.

:class:`Processor` runs a handler per record; :class:`RetryTopics` and
:class:`kheaders.deadletter.DeadLetter` say where failures go; :class:`AIOProcessor` is its
asyncio driver (also importable from ``kheaders.aio``); :class:`ShareProcessor` reads as a
share group (KIP-932), retrying by :class:`Redelivery`; :class:`ExactlyOnceProcessor` runs
each batch in one Kafka transaction, with the outputs the handler gives :func:`emit`. All
carry out the steps of one engine free of I/O (``_engine``), which makes every decision. See
docs/processing.md.
``DeadLetter``, ``KHEADERS``, ``SPRING``, ``describe``, ``without_retry_state`` and the
``spring_headers`` module moved to :mod:`kheaders.deadletter` (``spring_headers`` is
:mod:`kheaders.deadletter.spring`); the old names work, with a DeprecationWarning, for one
release.
"""

from kheaders import _public
from kheaders.processing._aio import AIOProcessor
from kheaders.processing._core import HeadersFilter
from kheaders.processing._delivery import Delivery, delivery
from kheaders.processing._exactly_once import ExactlyOnceProcessor
from kheaders.processing._outputs import emit
from kheaders.processing._processor import Processor
from kheaders.processing._redelivery import Redelivery
from kheaders.processing._retry import RetryTopics
from kheaders.processing._share import ShareProcessor

__all__ = [
    "AIOProcessor",
    "Delivery",
    "ExactlyOnceProcessor",
    "HeadersFilter",
    "Processor",
    "Redelivery",
    "RetryTopics",
    "ShareProcessor",
    "delivery",
    "emit",
]
_public.claim(__name__, globals())

# Names that moved to kheaders.deadletter in 0.2; the old ones warn for one release.
__getattr__ = _public.moved(
    __name__,
    {
        "DeadLetter": "kheaders.deadletter.DeadLetter",
        "KHEADERS": "kheaders.deadletter.KHEADERS",
        "SPRING": "kheaders.deadletter.SPRING",
        "describe": "kheaders.deadletter.describe",
        "spring_headers": "kheaders.deadletter.spring",
        "without_retry_state": "kheaders.deadletter.without_retry_state",
    },
    since="0.2",
)
