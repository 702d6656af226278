"""A record's headers at the produce edge: what the caller passed, checked once, as sent.

:class:`OutgoingHeaders` is a producer's one owner of these checks and of the memo that lets
the usual "same header list on every record" through without checking it again.

Two ways in, one set of rules (the Headers model's, then the header limits):

* :func:`plain_list` accepts the usual headers, a list of ``(str, bytes)`` tuples with keys
  already known valid, well within the limits, without building anything: librdkafka gets
  the caller's list as it is.
* :func:`closed` takes :class:`Headers` (built from any accepted shape by :func:`writable`),
  checks them against the limits and closes them: the record's headers from then on.

Anything :func:`plain_list` does not vouch for goes the second way, which raises the model's
error (naming the key) or HeaderLimitError.
"""

from __future__ import annotations

from operator import is_
from typing import TYPE_CHECKING, Any, TypeAlias

from kheaders._errors import ReadOnlyHeadersError
from kheaders._model.headers import (
    READ_ONLY_MESSAGE,
    Headers,
    HeaderTypes,
    plain_pairs,
    received,
)
from kheaders._model.limits import check_sendable, plain_fit

if TYPE_CHECKING:
    from kheaders import _cython as cython
    from kheaders._model.limits import HeaderLimits
else:
    try:  # the compiled core: Cython reads this import itself (pure-Python mode)
        import cython
    except ModuleNotFoundError:  # plain Python without Cython installed
        from kheaders import _cython as cython

_COMPILED: bool = cython.compiled
"""True in the compiled core (read once: plain Python then pays one global lookup)."""

Sent: TypeAlias = "Headers | list[Any] | None"
"""What librdkafka is handed for a record's headers: the caller's list as it is, closed
Headers, or ``None``."""
Kept: TypeAlias = "Headers | tuple[tuple[str, bytes | None], ...]"
"""A record's headers as its delivery report keeps them until librdkafka reports it: closed
:class:`Headers` as they are (a Headers the caller passed is the one its callback sees; the
shared empty ones for none), or a plain list's pairs as a tuple (a snapshot the caller's
later changes do not reach, and which the garbage collector stops tracking)."""
_NOTHING_CHECKED: tuple[Any, ...] = (object(),)
"""Holds no header pair: the memo before any list passed the checks."""

EMPTY = received([])
"""The headers of a record that has none (read-only, shared)."""


def writable(headers: HeaderTypes) -> Headers:
    """The record's writable Headers; the given object itself when it is a Headers.

    Raises ReadOnlyHeadersError for closed Headers (already sent or received), and what the
    Headers model raises for a bad pair.
    """
    if headers is None:
        return Headers()
    if type(headers) is Headers:
        if headers.read_only:
            raise ReadOnlyHeadersError(READ_ONLY_MESSAGE)
        return headers
    return Headers(headers)


def closed(headers: Headers, limits: HeaderLimits | None) -> Headers:
    """``headers`` checked against ``limits`` (when given), then closed; returned.

    Raises what :func:`~kheaders._model.limits.check_sendable` raises (InvalidNameError for a
    key librdkafka cannot take, HeaderLimitError naming the limit and key); the headers then
    stay writable.
    """
    check_sendable(headers, limits)
    return headers.close()


plain_list = plain_fit
"""``plain_list(headers, limits)``: True when librdkafka may take ``headers`` (a list) as they
are: ``(str, bytes)`` tuples whose keys passed the key rule before (one lookup each), within
``limits``, checked in one pass (:func:`~kheaders._model.limits.plain_fit`). False says only
"look closer" (:func:`closed`, which checks unknown keys and so makes them known)."""


def snapshot(sent: Sent) -> Kept:
    """What a report keeps of ``sent`` (see :data:`Kept`): a plain list as a tuple, closed
    Headers with plain-tuple pairs (``plain_pairs``: the collector stops tracking them), the
    shared empty Headers for none."""
    if type(sent) is list:
        return tuple(sent)
    if sent is None:
        return EMPTY
    return plain_pairs(sent)  # type: ignore[arg-type]  # closed Headers


def _same_pairs(headers: list[Any], memo: tuple[Any, ...]) -> bool:
    """Whether ``headers`` holds the very pair objects of ``memo``, in order (identity).

    The compiled core's memo check; plain Python compares with ``all(map(is_, ...))`` in
    :meth:`OutgoingHeaders.sent`, the same answer (pinned by a property test).
    """
    if len(headers) != len(memo):
        return False
    for i in range(len(memo)):  # noqa: SIM110 - a loop, not all(generator): no frame per call
        if headers[i] is not memo[i]:
            return False
    return True


class OutgoingHeaders:
    """A producer's header checks (the model's rules, then its ``limits``) and their memo.

    The memo is the pairs of the last header list that passed, as a tuple. A list holding
    those very pair objects (an identity comparison per pair) is not checked again, so the
    usual "same headers on every record" costs next to nothing. Identity, not equality: a
    tuple is immutable, so the same tuple objects mean the same exact ``str`` keys and
    ``bytes`` values that were checked, while an equal pair may hold a ``str`` subclass key
    (librdkafka would send ``str()`` of it, which can be other text, or crash on a lone
    surrogate) or a ``bytearray`` value.
    """

    __slots__ = ("_memo", "limits")

    def __init__(self, limits: HeaderLimits | None) -> None:
        self.limits = limits
        self._memo: tuple[Any, ...] = _NOTHING_CHECKED

    def sent(self, headers: HeaderTypes) -> Sent:
        """What librdkafka gets for ``headers`` of a record nobody else sees: the caller's
        list itself when the memo vouches for it or :func:`plain_list` accepts it (it becomes
        the memo), else closed Headers (:func:`closed`); ``None`` for none.

        Raises as :func:`writable` and :func:`closed` (the model's errors naming the key,
        HeaderLimitError).
        """
        if type(headers) is list:
            memo = self._memo
            # compiled: a C loop (outgoing.pxd); plain Python: the same answer, no frame
            if len(headers) == len(memo) and (
                _same_pairs(headers, memo) if _COMPILED else all(map(is_, headers, memo))
            ):
                return headers
            if plain_fit(headers, self.limits):
                if not headers:
                    return None
                self._memo = tuple(headers)
                return headers
        elif headers is None:
            return None
        return closed(writable(headers), self.limits) or None

    def kept(self, sent: Sent) -> Kept:
        """What the report of a record just handed ``sent`` (from :meth:`sent`) keeps: a list
        that passed holds the memo's very pairs, so the memo is its snapshot (shared by every
        record with those headers: none is made per record); else :func:`snapshot`."""
        if type(sent) is list:
            return self._memo
        if sent is None:
            return EMPTY
        return plain_pairs(sent)  # type: ignore[arg-type]  # closed Headers

    def forget(self) -> None:
        """Check every list again: librdkafka refused one the memo or the plain check let
        through (the full check names the header at fault)."""
        self._memo = _NOTHING_CHECKED
