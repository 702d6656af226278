"""How loud kheaders is and where its events go: :func:`configure_logging` and the environment.

kheaders never calls ``structlog.configure``: the application owns structlog's (and stdlib
logging's) global set-up. Only kheaders' own loggers (:mod:`kheaders._log`) read these
settings.

* **Level**: ``configure_logging(level=...)``, else ``KHEADERS_LOG_LEVEL`` (``debug``,
  ``info``, ``warning``, ``error``, ``critical``, any case, or a number). Without either,
  kheaders logs warnings and up, unless its events go to a framework that filters them
  itself (a structlog the application configured, or stdlib logging): then that decides.
* **Output**: ``configure_logging(json=True)`` or ``KHEADERS_LOG_JSON=true``: one JSON object
  per line on stderr (or ``stream``); ``configure_logging(stdlib=True)``: stdlib ``logging``
  loggers named as kheaders' (``kheaders.producer``, ...). Otherwise kheaders' events go
  through structlog as the application configured it, or, while structlog is not configured,
  are rendered as structlog's default console lines on **stderr** (structlog's own default is
  stdout, where a command's output goes).

An explicit setting always wins over the environment; each call of :func:`configure_logging`
replaces every setting (``configure_logging()`` goes back to the environment and defaults).
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from dataclasses import dataclass
from typing import TextIO

from kheaders._errors import ConfigurationError
from kheaders._settings import config_bool

LEVEL_ENV = "KHEADERS_LOG_LEVEL"
"""The environment variable read for kheaders' level when none is configured."""
JSON_ENV = "KHEADERS_LOG_JSON"
"""The environment variable that, when true, makes kheaders' events JSON lines."""
DEFAULT_LEVEL = logging.WARNING
"""kheaders' level when nothing sets one and nothing else filters its events."""

LEVEL_NAMES: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}


def parse_level(value: object, setting: str) -> int:
    """A level as a number: a name of :data:`LEVEL_NAMES` (any case) or an int (text too).

    >>> parse_level("Info", "level"), parse_level(30, "level"), parse_level(" 10 ", "level")
    (20, 30, 10)

    Raises ConfigurationError naming ``setting`` for anything else.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in LEVEL_NAMES:
            return LEVEL_NAMES[text]
        if text.isdigit():
            return int(text)
    raise ConfigurationError(
        f"{setting}: expected one of {', '.join(n for n in LEVEL_NAMES if n != 'warn')}"
        f" or a number, got {value!r}"
    )


@dataclass(frozen=True, slots=True)
class Settings:
    """What :func:`configure_logging` set (``None``: not set, the environment decides)."""

    level: int | None = None
    json: bool | None = None
    stdlib: bool = False
    stream: TextIO | None = None


_settings = Settings()
generation = 0
"""Bumped by every :func:`configure_logging`: loggers rebuild what they cached."""
_env_cache: dict[str, int | None] = {}


def settings() -> Settings:
    """The settings :func:`configure_logging` made (the defaults until it is called)."""
    return _settings


def configure_logging(
    level: str | int | None = None,
    *,
    json: bool | None = None,
    stdlib: bool = False,
    stream: TextIO | None = None,
) -> None:
    """Set kheaders' log level and output, for kheaders' own loggers only.

    ``level``: ``"debug"`` ... ``"critical"`` or a ``logging`` number; ``None`` reads
    ``KHEADERS_LOG_LEVEL``. ``json``: one JSON object per line (``None`` reads
    ``KHEADERS_LOG_JSON``). ``stdlib``: hand events to stdlib ``logging`` (with ``json``, the
    message is the JSON text). ``stream``: where console and JSON lines go (default: the
    current ``sys.stderr``). Each call replaces every earlier setting.

    >>> configure_logging("error"); configure_logging()

    Raises ConfigurationError naming the argument for a level it does not know, or for a
    ``stream`` together with ``stdlib`` (stdlib's handlers decide where records go).
    """
    global _settings, generation  # noqa: PLW0603 - the one place they are set
    parsed = None if level is None else parse_level(level, "configure_logging(level=...)")
    if stdlib and stream is not None:
        raise ConfigurationError(
            "configure_logging(stream=...) has no meaning with stdlib=True: stdlib logging's"
            " handlers decide where records go"
        )
    _settings = Settings(parsed, json, stdlib, stream)
    generation += 1


def env_level() -> int | None:
    """``KHEADERS_LOG_LEVEL`` as a number, ``None`` when unset, empty or not a level (a bad
    value must not break the failure path that logs: it is ignored, and said once)."""
    raw = os.environ.get(LEVEL_ENV)
    if not raw:
        return None
    try:
        return _env_cache[raw]
    except KeyError:
        pass
    try:
        parsed: int | None = parse_level(raw, LEVEL_ENV)
    except ConfigurationError as exc:
        parsed = None
        warnings.warn(f"kheaders ignores it: {exc}", RuntimeWarning, stacklevel=3)
    _env_cache[raw] = parsed
    return parsed


def wants_json() -> bool:
    """Whether kheaders' events are JSON lines (the setting, else ``KHEADERS_LOG_JSON``)."""
    if _settings.json is not None:
        return _settings.json
    raw = os.environ.get(JSON_ENV)
    if not raw:
        return False
    try:
        return config_bool(raw, JSON_ENV)
    except ConfigurationError:
        return False


def structlog_configured() -> bool:
    """Whether the application configured structlog (never imports it: unimported, it is not)."""
    module = sys.modules.get("structlog")
    return module is not None and bool(module.is_configured())


def threshold() -> int:
    """The lowest level kheaders passes on now (see the module doc)."""
    explicit = _settings.level
    if explicit is not None:
        return explicit
    from_env = env_level()
    if from_env is not None:
        return from_env
    if _settings.stdlib or (not wants_json() and structlog_configured()):
        return logging.NOTSET  # stdlib's levels, or the application's structlog, decide
    return DEFAULT_LEVEL


def output() -> str:
    """Where kheaders' events go now: ``stdlib``, ``json``, ``structlog`` or ``console``."""
    if _settings.stdlib:
        return "stdlib"
    if wants_json():
        return "json"
    return "structlog" if structlog_configured() else "console"


def stream() -> TextIO:
    """The stream console and JSON lines go to: the configured one, else ``sys.stderr``
    as it is now (a test's capture included)."""
    return _settings.stream if _settings.stream is not None else sys.stderr
