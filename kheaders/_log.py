"""kheaders' loggers: filtered by kheaders' level first, structlog imported only when needed.

``import structlog`` loads its console renderer and, when installed, ``rich`` and
``pygments``: about 9 MiB of resident memory and 90 ms per process. kheaders logs mostly on
failure paths, and an event below kheaders' level (:mod:`kheaders._logsetup`: warnings and up
by default) returns before anything is imported or rendered.

An event that passes goes where :func:`kheaders._logsetup.output` says: through structlog as
the application configured it (``structlog.get_logger(name)``, as before), to kheaders' own
console or JSON pipeline on stderr (never ``structlog.configure``), or to the stdlib logger
called ``name``.
"""

from __future__ import annotations

import json as _json
import logging
from typing import Any

from kheaders import _logsetup


class LazyLogger:
    """Stands in for ``structlog.get_logger(name)``: ``debug`` ... ``critical`` and
    ``exception`` take an event and key-value fields, as structlog's methods do.

    >>> log = LazyLogger("kheaders.example")
    >>> log.name
    'kheaders.example'
    """

    __slots__ = ("_built", "_built_for", "_structlog", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._structlog: Any = None
        self._built: Any = None
        self._built_for: tuple[int, str] | None = None

    def debug(self, event: str, *args: Any, **fields: Any) -> None:
        """Log ``event`` at debug level."""
        self._log(logging.DEBUG, "debug", event, args, fields)

    def info(self, event: str, *args: Any, **fields: Any) -> None:
        """Log ``event`` at info level."""
        self._log(logging.INFO, "info", event, args, fields)

    def warning(self, event: str, *args: Any, **fields: Any) -> None:
        """Log ``event`` at warning level."""
        self._log(logging.WARNING, "warning", event, args, fields)

    warn = warning

    def error(self, event: str, *args: Any, **fields: Any) -> None:
        """Log ``event`` at error level."""
        self._log(logging.ERROR, "error", event, args, fields)

    def critical(self, event: str, *args: Any, **fields: Any) -> None:
        """Log ``event`` at critical level."""
        self._log(logging.CRITICAL, "critical", event, args, fields)

    def exception(self, event: str, *args: Any, **fields: Any) -> None:
        """Log ``event`` at error level with the exception being handled."""
        fields.setdefault("exc_info", True)
        self._log(logging.ERROR, "exception", event, args, fields)

    def log(self, level: int, event: str, *args: Any, **fields: Any) -> None:
        """Log ``event`` at the stdlib ``level`` (a number)."""
        name = logging.getLevelName(level).lower()
        method = name if name in _METHODS else "info"
        self._log(level, method, event, args, fields)

    def enabled(self, level: int) -> bool:
        """Whether an event at ``level`` would be passed on now."""
        return level >= _logsetup.threshold()

    def _log(
        self, level: int, method: str, event: str, args: tuple[Any, ...], fields: dict[str, Any]
    ) -> None:
        if level < _logsetup.threshold():
            return
        where = _logsetup.output()
        if where == "stdlib":
            _to_stdlib(self.name, level, event, args, fields)
            return
        if where == "structlog":
            logger = self._structlog
            if logger is None:
                import structlog

                logger = self._structlog = structlog.get_logger(self.name)
        else:
            logger = self._own(where)
        getattr(logger, method)(event, *args, **fields)

    def _own(self, where: str) -> Any:
        """kheaders' own console or JSON pipeline for this logger (rebuilt when reconfigured)."""
        key = (_logsetup.generation, where)
        if self._built_for != key:
            self._built = _pipeline(self.name, json=where == "json")
            self._built_for = key
        return self._built


_METHODS = frozenset({"debug", "info", "warning", "error", "critical"})


class _StreamLogger:
    """structlog's final logger for kheaders' own pipelines: writes each rendered line to
    :func:`kheaders._logsetup.stream` as it is at that moment. A stream that fails (closed,
    full disk) loses the line, as a stdlib handler would: logging never breaks the caller."""

    def msg(self, message: str) -> None:
        out = _logsetup.stream()
        try:
            out.write(message + "\n")
            out.flush()
        except (OSError, ValueError):
            pass

    debug = info = warning = warn = error = err = critical = fatal = exception = log = msg


def _pipeline(name: str, *, json: bool) -> Any:
    """A structlog logger for ``name`` with kheaders' own processors (no global config)."""
    import structlog

    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.StackInfoRenderer(),
    ]
    if json:
        processors += [
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(default=str),
        ]
    else:
        processors += [
            structlog.dev.set_exc_info,
            structlog.processors.TimeStamper(fmt="%Y-%m-%d %H:%M:%S", utc=False),
            structlog.dev.ConsoleRenderer(colors=False),
        ]
    return structlog.wrap_logger(
        _StreamLogger(),
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET),
        context_class=dict,
        cache_logger_on_first_use=False,
    ).bind(logger=name)


def _to_stdlib(
    name: str, level: int, event: str, args: tuple[Any, ...], fields: dict[str, Any]
) -> None:
    """Hand an event to the stdlib logger ``name``: ``event key=value ...`` (or the JSON
    object), the fields also as the record's ``kheaders`` attribute."""
    logger = logging.getLogger(name)
    if not logger.isEnabledFor(level):
        return
    exc_info = fields.pop("exc_info", None)
    if args:
        event = event % args
    if _logsetup.wants_json():
        text = _json.dumps(
            {"event": event, "level": logging.getLevelName(level).lower(), "logger": name} | fields,
            default=str,
        )
    else:
        text = " ".join([event, *(f"{k}={v!r}" for k, v in fields.items())])
    logger.log(level, "%s", text, exc_info=exc_info, extra={"kheaders": fields})


def get_logger(name: str) -> LazyLogger:
    """A logger called ``name`` that imports structlog on first use."""
    return LazyLogger(name)
