"""Setting values as configs give them (text or typed): the one parser of each kind.

A foundation module, like ``_errors``: every layer reads its settings through it, and
``kheaders`` re-exports :func:`config_bool` for interceptors and Spark options.
"""

from __future__ import annotations

from kheaders._errors import ConfigurationError

TRUE_WORDS: tuple[str, ...] = ("true", "yes", "on", "1", "t")
FALSE_WORDS: tuple[str, ...] = ("false", "no", "off", "0", "f")


def config_bool(value: object, setting: str) -> bool:
    """A setting's value as a bool: ``True``/``False``, or text in any case, spaces ignored:
    ``true``/``false``, ``yes``/``no``, ``on``/``off``, ``1``/``0``, ``t``/``f``.

    Java's config parser takes ``true``/``false``; librdkafka also ``1``/``0`` and ``t``/``f``
    (so kheaders reads a librdkafka setting as librdkafka does); properties files and
    environment variables often say ``yes``/``on``: all of them mean the same here.

    >>> config_bool("Yes", "x"), config_bool(" off ", "x"), config_bool(False, "x")
    (True, False, False)

    Raises ConfigurationError naming ``setting`` for any other value.
    """
    if value is True or value is False:
        return value
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise ConfigurationError(
        f"{setting}: expected true or false (or yes/no, on/off, 1/0, t/f), got {value!r}"
    )
