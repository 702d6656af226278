"""Rendering header values for humans (logs, ``kheaders tail``) with secrets redacted.

A header key is *sensitive* when, compared case-insensitively, it is ``authorization`` or
``cookie``, or contains ``token``, ``secret``, ``password`` or ``key``. Its value is shown
as ``<redacted>``. Other values are shown as text when they are printable UTF-8, as
``0x``-prefixed hex otherwise, and ``<null>`` for a null header.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

REDACTED = "<redacted>"
"""What a sensitive header's value is rendered as."""
NULL = "<null>"
"""What a null header value is rendered as."""

SENSITIVE_EXACT: frozenset[str] = frozenset({"authorization", "cookie", "set-cookie"})
"""Header keys (lowercase) whose values are always redacted by default."""
SENSITIVE_PARTS: tuple[str, ...] = ("token", "secret", "password", "key")
"""Substrings of header keys (lowercase) whose values are redacted by default."""


def is_sensitive(key: str) -> bool:
    """True when the default rule redacts ``key``'s value.

    >>> is_sensitive("Authorization"), is_sensitive("x-api-key"), is_sensitive("traceparent")
    (True, True, False)
    """
    low = key.lower()
    return low in SENSITIVE_EXACT or any(part in low for part in SENSITIVE_PARTS)


@dataclass(frozen=True, slots=True)
class Redactor:
    """A redaction rule: the default rule, plus ``extra`` keys, minus an ``allow`` list.

    ``extra`` names more keys to redact (exact, case-insensitive); ``allow`` names keys
    never redacted (exact, case-insensitive) even if the default rule matches them;
    ``enabled=False`` redacts nothing.

    >>> Redactor(extra=("x-user",), allow=("schema.key",)).is_sensitive("X-User")
    True
    >>> Redactor(allow=("schema.key",)).is_sensitive("schema.key")
    False
    """

    extra: Iterable[str] = ()
    allow: Iterable[str] = ()
    enabled: bool = True
    _extra: frozenset[str] = field(init=False, repr=False)
    _allow: frozenset[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_extra", frozenset(k.lower() for k in self.extra))
        object.__setattr__(self, "_allow", frozenset(k.lower() for k in self.allow))

    def is_sensitive(self, key: str) -> bool:
        """True when this rule redacts ``key``'s value."""
        if not self.enabled:
            return False
        low = key.lower()
        if low in self._allow:
            return False
        return low in self._extra or is_sensitive(low)


DEFAULT_REDACTOR = Redactor()
"""The default rule (see :func:`is_sensitive`)."""


def render_value(value: bytes | None, limit: int | None = None) -> str:
    """A header value as printable text, ``0x`` hex when it is not printable UTF-8, or
    ``<null>``; cut to ``limit`` characters (with ``…``) when given.

    >>> render_value(b"hello"), render_value(b"\\x00\\xff"), render_value(None)
    ('hello', '0x00ff', '<null>')
    """
    if value is None:
        return NULL
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        text = "0x" + value.hex()
    else:
        if not text.isprintable():
            text = "0x" + value.hex()
    if limit is not None and len(text) > limit:
        return text[:limit] + "…"
    return text


def render_headers(
    headers: Iterable[tuple[str, bytes | None]],
    redact: Redactor | bool = True,
    limit: int | None = None,
) -> list[tuple[str, str]]:
    """Headers as ``(key, text)`` pairs, in order, sensitive values as ``<redacted>``.

    ``redact`` is ``True`` (the default rule), ``False`` (show everything) or a
    :class:`Redactor`. Values are rendered by :func:`render_value` (``limit`` cuts them).

    >>> render_headers([("trace", b"abc"), ("Authorization", b"Bearer x"), ("bin", b"\\x01")])
    [('trace', 'abc'), ('Authorization', '<redacted>'), ('bin', '0x01')]
    """
    if redact is True:
        rule: Redactor | None = DEFAULT_REDACTOR
    elif redact is False:
        rule = None
    else:
        rule = redact
    out: list[tuple[str, str]] = []
    for key, value in headers:
        if rule is not None and rule.is_sensitive(key):
            out.append((key, REDACTED))
        else:
            out.append((key, render_value(value, limit)))
    return out
