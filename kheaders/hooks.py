"""The interceptor contract: one small protocol per hook, and the chain that runs them.

An interceptor is any object with one or more of the optional hook methods (:class:`OnSend`,
:class:`OnAcknowledgement` for producers; :class:`OnConsume`, :class:`OnCommit` for
consumers); :class:`Configurable` and :class:`Closeable` are its optional lifecycle.
:class:`InterceptorChain` is what a client builds from ``interceptor.classes``: it sorts the
interceptors into one tuple per hook once, and applies Kafka's failure policy (an interceptor
that raises is logged, counted and skipped; a record is never lost). Ready interceptors live in
:mod:`kheaders.interceptors`; docs/interceptors.md shows how to write one.

These names were importable from ``kheaders`` itself until 0.1; that still works, with a
DeprecationWarning, for one more release.
"""

from kheaders import _public
from kheaders._client.chain import (
    Closeable,
    Configurable,
    InterceptorChain,
    OnAcknowledgement,
    OnCommit,
    OnConsume,
    OnSend,
)

__all__ = [
    "Closeable",
    "Configurable",
    "InterceptorChain",
    "OnAcknowledgement",
    "OnCommit",
    "OnConsume",
    "OnSend",
]
_public.claim(__name__, globals())
