"""Rendering headers for humans (logs, ``kheaders tail``, reprs) with secrets redacted.

A value is shown as ``<redacted>`` when its key *or the value itself* looks sensitive:

* the key, lowercased with ``-``, ``_``, ``.`` and spaces removed, is ``auth`` or contains
  ``authorization``, ``cookie``, ``token``, ``secret``, ``password``, ``passwd``,
  ``passphrase``, ``credential``, ``apikey``, ``accesskey`` or ``privatekey``, or *ends* in
  ``key``/``keys`` (``x-api-key``, ``Ocp-Apim-Subscription-Key``; but not Schema Registry's
  ``__key_schema_id``, which names the record key's schema);
* the value is credential-shaped, whatever its key (:data:`CREDENTIAL_PATTERNS`): a JWT, an
  HTTP ``Bearer``/``Basic``/``Digest``/... credential, a well-known token prefix (GitHub,
  GitLab, Slack, AWS, Google, Stripe, OpenAI-style ``sk-``, npm, PyPI), a PEM private key, or
  a URL with a password in it.

Other values are shown as text when they are printable UTF-8, as ``0x``-prefixed hex
otherwise, and ``<null>`` for a null header. Keys (and any other peer-supplied text) are shown
with non-printable characters escaped (:func:`printable`), so a key cannot move the cursor,
ring the bell or forge a line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

REDACTED = "<redacted>"
"""What a sensitive header's value is rendered as."""
NULL = "<null>"
"""What a null header value is rendered as."""

SENSITIVE_EXACT: frozenset[str] = frozenset({"authorization", "cookie", "set-cookie", "auth"})
"""Header keys (lowercase) whose values are always redacted by default."""
SENSITIVE_PARTS: tuple[str, ...] = (
    "authorization",
    "cookie",
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "apikey",
    "accesskey",
    "privatekey",
)
"""Substrings of header keys (lowercase, separators removed) whose values are redacted."""
SENSITIVE_SUFFIXES: tuple[str, ...] = ("key", "keys")
"""Endings of header keys (lowercase, separators removed) whose values are redacted."""

CREDENTIAL_PATTERNS: tuple[str, ...] = (
    r"eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.",  # a JWT (JWS or JWE compact form)
    r"(?i:^\s*(?:bearer|basic|digest|negotiate|ntlm|token|apikey|aws4-hmac-sha256|hoba"
    r"|mutual|scram-sha-\d+|vapid)\s+\S{6,})",  # an HTTP Authorization credential
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",  # GitHub
    r"\bglpat-[A-Za-z0-9_-]{20,}",  # GitLab
    r"\bxox[abposre]-[A-Za-z0-9-]{10,}",  # Slack
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key id
    r"\bAIza[0-9A-Za-z_-]{35}",  # Google API key
    r"\bya29\.[0-9A-Za-z_-]{20,}",  # Google OAuth access token
    r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{10,}",  # Stripe secret/restricted key
    r"\bsk-[A-Za-z0-9_-]{20,}",  # OpenAI-style secret key
    r"\bnpm_[A-Za-z0-9]{36}",  # npm
    r"\bpypi-[A-Za-z0-9_-]{50,}",  # PyPI
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----",  # PEM private key
    r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@",  # a URL with user:password@
)
"""Regular expressions (searched in the value's bytes) for credential-shaped values."""

_SEPARATORS = str.maketrans("", "", "-_. ")


def _compile(patterns: Iterable[str]) -> re.Pattern[bytes] | None:
    joined = "|".join(f"(?:{p})" for p in patterns)
    return re.compile(joined.encode("utf-8")) if joined else None


_DEFAULT_VALUES = _compile(CREDENTIAL_PATTERNS)


def is_sensitive(key: str) -> bool:
    """True when the default rule redacts ``key``'s value, whatever the value.

    >>> is_sensitive("Authorization"), is_sensitive("x-api-key"), is_sensitive("traceparent")
    (True, True, False)
    >>> is_sensitive("Proxy-Authorization"), is_sensitive("__key_schema_id")
    (True, False)
    """
    low = key.lower()
    if low in SENSITIVE_EXACT:
        return True
    flat = low.translate(_SEPARATORS)
    return any(part in flat for part in SENSITIVE_PARTS) or flat.endswith(SENSITIVE_SUFFIXES)


def looks_like_credential(value: bytes | bytearray | memoryview | str | None) -> bool:
    """True when ``value`` is credential-shaped (:data:`CREDENTIAL_PATTERNS`), whatever its key.

    >>> looks_like_credential(b"Basic dXNlcjpwYXNzd29yZA=="), looks_like_credential(b"hello")
    (True, False)
    """
    if value is None or _DEFAULT_VALUES is None:
        return False
    data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    return _DEFAULT_VALUES.search(data) is not None


def printable(text: str) -> str:
    """``text`` with every non-printable character escaped (``\\n``, ``\\x1b``, ``\\u202e``).

    >>> printable("ok"), printable("a\\nb\\x1b[2J")
    ('ok', 'a\\\\nb\\\\x1b[2J')
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(c: str) -> str:
    named = _NAMED.get(c)
    if named is not None:
        return named
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@dataclass(frozen=True, slots=True)
class Redactor:
    """A redaction rule: the default rule, plus ``extra`` keys, minus an ``allow`` list.

    ``extra`` names more keys to redact (exact, case-insensitive); ``allow`` names keys
    never redacted by their name (exact, case-insensitive) even if the default rule matches
    them; ``values=False`` turns off the credential-shaped value detection
    (:data:`CREDENTIAL_PATTERNS`) and ``value_patterns`` adds regular expressions to it;
    ``enabled=False`` redacts nothing.

    >>> Redactor(extra=("x-user",), allow=("schema.key",)).is_sensitive("X-User")
    True
    >>> Redactor(allow=("schema.key",)).is_sensitive("schema.key")
    False
    >>> Redactor().hides("x-note", b"Bearer abcdef123456"), Redactor(values=False).hides(
    ...     "x-note", b"Bearer abcdef123456")
    (True, False)

    Raises re.error at construction for a pattern that does not compile.
    """

    extra: Iterable[str] = ()
    allow: Iterable[str] = ()
    enabled: bool = True
    values: bool = True
    value_patterns: Iterable[str] = ()
    _extra: frozenset[str] = field(init=False, repr=False)
    _allow: frozenset[str] = field(init=False, repr=False)
    _values: re.Pattern[bytes] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_extra", frozenset(k.lower() for k in self.extra))
        object.__setattr__(self, "_allow", frozenset(k.lower() for k in self.allow))
        patterns = tuple(self.value_patterns)
        compiled = None
        if self.values:
            compiled = _compile((*CREDENTIAL_PATTERNS, *patterns)) if patterns else _DEFAULT_VALUES
        object.__setattr__(self, "_values", compiled)

    def is_sensitive(self, key: str) -> bool:
        """True when this rule redacts ``key``'s value whatever the value."""
        if not self.enabled:
            return False
        low = key.lower()
        if low in self._allow:
            return False
        return low in self._extra or is_sensitive(low)

    def hides(self, key: str, value: bytes | bytearray | memoryview | str | None) -> bool:
        """True when this rule redacts this header: a sensitive key or a credential value."""
        if not self.enabled:
            return False
        if self.is_sensitive(key):
            return True
        if value is None or self._values is None:
            return False
        data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
        return self._values.search(data) is not None


DEFAULT_REDACTOR = Redactor()
"""The default rule (see :func:`is_sensitive` and :func:`looks_like_credential`)."""


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
    :class:`Redactor`. Keys are escaped by :func:`printable`; values are rendered by
    :func:`render_value` (``limit`` cuts them).

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
        if rule is not None and rule.hides(key, value):
            out.append((printable(key), REDACTED))
        else:
            out.append((printable(key), render_value(value, limit)))
    return out


def redacted_repr(key: str, value: object) -> str:
    """``repr(value)``, or ``<redacted>`` when the default rule hides this header (for reprs)."""
    if isinstance(value, bytes | str) and DEFAULT_REDACTOR.hides(key, value):
        return REDACTED
    return repr(value)
