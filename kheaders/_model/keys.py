"""The header-key rule: a non-empty ``str``, encodable as UTF-8, without NUL.

librdkafka takes header keys (and topic names, and config settings) as C strings:
confluent-kafka hands it ``PyUnicode_AsUTF8(key)`` without a check. A key holding NUL is cut
at the NUL and still reported delivered; a key with a lone surrogate (``"k\\udcff"``, what
``os.fsdecode`` or ``surrogateescape`` make of bad bytes) is a NULL pointer and kills the
interpreter. Kafka itself allows both, so records written by other clients may carry them;
kheaders refuses to *send* them, before librdkafka sees the record.

Valid keys are remembered with their UTF-8 size in :data:`KEY_SIZES`, so a key seen before
costs one dict lookup: the Headers model, the header limits and the lean produce path read the
table directly, and a key missing from it is checked (and added) by :func:`key_size`.
"""

from __future__ import annotations

from collections.abc import Iterable

from kheaders._errors import InvalidNameError

KEY_SIZES: dict[str, int] = {}
"""Keys known valid -> their UTF-8 size in bytes (bounded: cleared when full)."""
_KEY_SIZES_MAX = 4096
_SHOWN = 64


def shown(text: str) -> str:
    """``repr(text)``, cut to 64 characters: how errors name a key or topic."""
    return repr(text) if len(text) <= _SHOWN else f"{text[:_SHOWN]!r}..."


def c_string_problem(text: str) -> str | None:
    """Why librdkafka cannot take ``text`` intact as a C string, or ``None`` when it can.

    >>> c_string_problem("ok"), c_string_problem("a\\x00b"), c_string_problem("k\\udcff")
    (None, 'contains NUL at index 1 (librdkafka would cut it there)', 'is not encodable as UTF-8 (surrogates not allowed at index 1)')
    """  # noqa: E501
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"is not encodable as UTF-8 ({exc.reason} at index {exc.start})"
    if b"\x00" in raw:
        return f"contains NUL at index {text.index(chr(0))} (librdkafka would cut it there)"
    return None


def key_size(key: object) -> int:
    """The UTF-8 size of a valid header key (remembered in :data:`KEY_SIZES`).

    >>> key_size("trace"), key_size("é")
    (5, 2)

    Raises TypeError for a key that is not ``str`` (naming its type only: a misplaced value
    must not be echoed), InvalidNameError (naming the key) for an empty key, a key holding
    NUL, or one not encodable as UTF-8.
    """
    size = KEY_SIZES.get(key) if type(key) is str else None
    if size is not None:
        return size
    if not isinstance(key, str):
        raise TypeError(
            f"header key must be str, got {type(key).__name__}"
            " (kheaders never converts keys with str())"
        )
    key = str.__str__(key)  # a str subclass: its text, whatever it overrides
    if not key:
        raise InvalidNameError("header key must not be empty")
    problem = c_string_problem(key)
    if problem is not None:
        raise InvalidNameError(f"header key {shown(key)} {problem}")
    size = len(key) if key.isascii() else len(key.encode("utf-8"))
    if len(KEY_SIZES) >= _KEY_SIZES_MAX:
        KEY_SIZES.clear()
    KEY_SIZES[key] = size
    return size


def check_keys(items: Iterable[tuple[object, object]]) -> None:
    """Check every key of ``(key, value)`` pairs against the rule (a lookup per known key).

    Raises as :func:`key_size` for the first bad key.
    """
    for key, _ in items:
        if type(key) is not str or key not in KEY_SIZES:
            key_size(key)


def check_name(text: object, what: str = "topic") -> str:
    """``text`` when librdkafka can take it intact as a name (a topic); else raise.

    Raises TypeError for a non-``str``, InvalidNameError (naming ``what`` and the text) for
    an empty one, one holding NUL or one not encodable as UTF-8.
    """
    if not isinstance(text, str):
        raise TypeError(f"{what} must be str, got {type(text).__name__}")
    text = str.__str__(text)
    if not text:
        raise InvalidNameError(f"{what} must not be empty")
    problem = c_string_problem(text)
    if problem is not None:
        raise InvalidNameError(f"{what} {shown(text)} {problem}")
    return text
