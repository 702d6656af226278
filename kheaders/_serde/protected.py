"""What a plain deserializer says about a record whose value ``kheaders.protect`` encrypted.

An encrypted value is ciphertext: a plain deserializer fails on it (``JSON is not UTF-8``,
wrong length) for a reason its own message cannot name. The built-in deserializers look at
the headers only once decoding has failed (nothing is added to the path of records that
decode), and then name the cause. The header name is the protect package's
(``kheaders.protect._format.PROTECT_HEADER``; this layer sits below it and cannot import it).
"""

from __future__ import annotations

from kheaders._model.headers import Headers

PROTECT_HEADER = "kheaders.protect"
"""The header an encrypted record carries (see docs/protect.md)."""

_CAUSE = (
    "the record's value is encrypted (it carries a 'kheaders.protect' header): read the value"
    " with kheaders.protect.ProtectedDeserializer (wrapping this deserializer; docs/protect.md)"
)


def is_encrypted(headers: object) -> bool:
    """Whether a record's ``headers`` carry ``kheaders.protect``. Never raises: anything but
    :class:`~kheaders.Headers` gives ``False``."""
    return isinstance(headers, Headers) and PROTECT_HEADER in headers


def explained(topic: str, failure: str, headers: object) -> str:
    """``topic 'x': <failure>``, or, for an encrypted record, the cause first and then what
    the deserializer saw (``failure``)."""
    if is_encrypted(headers):
        return f"topic {topic!r}: {_CAUSE}; this deserializer saw: {failure}"
    return f"topic {topic!r}: {failure}"
