"""A record's headers at the produce edge: what the caller passed, checked once, as sent.

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

from typing import TYPE_CHECKING

from kheaders._errors import ReadOnlyHeadersError
from kheaders._model.headers import READ_ONLY_MESSAGE, Headers, HeaderTypes, received
from kheaders._model.limits import check_sendable, plain_fit

if TYPE_CHECKING:
    from kheaders._model.limits import HeaderLimits

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
