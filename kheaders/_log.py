"""Loggers that import structlog only when something is first logged.

``import structlog`` loads its console renderer and, when installed, ``rich`` and
``pygments``: about 9 MiB of resident memory and 90 ms per process. kheaders logs only on
failure paths, so an application that never hits one never pays for it.
"""

from __future__ import annotations

from typing import Any


class LazyLogger:
    """Stands in for ``structlog.get_logger(name)``; binds it on the first logging call.

    >>> log = LazyLogger("kheaders.example")
    >>> log.name
    'kheaders.example'
    """

    __slots__ = ("_logger", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._logger: Any = None

    def __getattr__(self, method: str) -> Any:
        logger = self._logger
        if logger is None:
            import structlog

            logger = self._logger = structlog.get_logger(self.name)
        return getattr(logger, method)


def get_logger(name: str) -> LazyLogger:
    """A logger called ``name`` that imports structlog on first use."""
    return LazyLogger(name)
