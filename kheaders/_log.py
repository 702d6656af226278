"""Loggers that import structlog on first use, so ``import kheaders`` stays light.

structlog's own import brings in rich and asyncio where they are installed (about 10 MB of
resident memory and 70 ms), which a producer or consumer that never logs need not pay.
"""

from __future__ import annotations

from typing import Any


class LazyLogger:
    """``structlog.get_logger(name)``, made on the first logging call; methods delegate to it.

    >>> LazyLogger("kheaders.example").info  # doctest: +ELLIPSIS
    <bound method ...>
    """

    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, method: str) -> Any:
        logger = self._logger
        if logger is None:
            import structlog

            logger = self._logger = structlog.get_logger(self._name)
        return getattr(logger, method)
