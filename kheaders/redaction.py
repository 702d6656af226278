"""Headers rendered for humans (logs, ``kheaders tail``, reprs, messages) with secrets redacted.

A value is shown as ``<redacted>`` when its key or the value itself looks sensitive
(:func:`is_sensitive`: keys such as ``authorization`` or ``x-api-key``; JWTs, ``Bearer``
credentials, well-known token prefixes, PEM private keys, URLs with a password, whatever their
key). :class:`Redactor` adds keys of your own or shows some that the rule hides;
:func:`printable` escapes peer-supplied text so that it cannot move a cursor or forge a line.

>>> from kheaders import Headers
>>> render_headers(Headers([("authorization", b"Bearer abc"), ("id", b"7")]))
[('authorization', '<redacted>'), ('id', '7')]

These names were importable from ``kheaders`` itself until 0.1; that still works, with a
DeprecationWarning, for one more release.
"""

from kheaders import _public
from kheaders._model.redact import (
    Redactor,
    is_sensitive,
    printable,
    render_headers,
    render_value,
)

__all__ = [
    "Redactor",
    "is_sensitive",
    "printable",
    "render_headers",
    "render_value",
]
_public.claim(__name__, globals())
