"""Processing records: a consumer service loop with non-blocking retry topics on Spring
Kafka's header contract, dead letters of the consumed bytes and at-least-once commits.

:class:`Processor` runs a handler per record; :class:`RetryTopics` and
:class:`kheaders.deadletter.DeadLetter` say where failures go; :class:`AIOProcessor` is its
asyncio driver (also importable from ``kheaders.aio``). Both carry out the steps of one
engine free of I/O (``_engine``), which makes every decision. See docs/processing.md.

``DeadLetter``, ``KHEADERS``, ``SPRING``, ``describe``, ``without_retry_state`` and the
``spring_headers`` module moved to :mod:`kheaders.deadletter` (``spring_headers`` is
:mod:`kheaders.deadletter.spring`); the old names work, with a DeprecationWarning, for one
release.
"""

import warnings as _warnings

from kheaders import _public
from kheaders.processing._aio import AIOProcessor
from kheaders.processing._core import HeadersFilter
from kheaders.processing._delivery import Delivery, delivery
from kheaders.processing._processor import Processor
from kheaders.processing._retry import RetryTopics

__all__ = [
    "AIOProcessor",
    "Delivery",
    "HeadersFilter",
    "Processor",
    "RetryTopics",
    "delivery",
]
_public.claim(__name__, globals())

_MOVED = frozenset(("DeadLetter", "KHEADERS", "SPRING", "describe", "without_retry_state"))


def __getattr__(name: str) -> object:
    """The names that moved to :mod:`kheaders.deadletter`, with a DeprecationWarning."""
    if name not in _MOVED and name != "spring_headers":
        raise AttributeError(f"module 'kheaders.processing' has no attribute {name!r}")
    import importlib

    new = "spring" if name == "spring_headers" else name
    _warnings.warn(
        f"kheaders.processing.{name} moved to kheaders.deadletter.{new}; the old name will be"
        " removed in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    if name == "spring_headers":  # the old module, its own warning said once (just above)
        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore", DeprecationWarning)
            return importlib.import_module("kheaders.processing.spring_headers")
    return getattr(importlib.import_module("kheaders.deadletter"), name)
