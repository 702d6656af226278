"""librdkafka's log lines routed to kheaders' logger instead of the process's stderr.

Without a ``logger`` in its configuration librdkafka writes every line to stderr itself: an
unreachable bootstrap fills a Spark console with hundreds of "Connect ... refused" lines.
With one, confluent-kafka hands each line to ``logger.log(level, fmt, *args)`` during
``poll``/``consume``/``flush``; here the last error-level line is kept so an error message
can quote it, and, once the application has configured structlog, each distinct line goes
to the logger ``kheaders.spark.librdkafka`` at debug level. An unconfigured structlog would
print every level to stdout, the very noise this exists to remove, so then nothing is logged.
"""

from __future__ import annotations

import logging
from typing import Any

from kheaders._log import get_logger

_log = get_logger("kheaders.spark.librdkafka")
_SEEN_LIMIT = 256


class ClientLog:
    """A ``logger`` for confluent-kafka clients: forwards distinct lines at debug level."""

    __slots__ = ("_seen", "last_error", "role")

    def __init__(self, role: str) -> None:
        self.role = role
        self.last_error: str | None = None
        self._seen: set[str] = set()

    def log(self, level: int, fmt: str, *args: Any) -> None:
        """Called by confluent-kafka for each librdkafka line (``fmt % args``)."""
        try:
            line = fmt % args
        except (TypeError, ValueError):
            line = " ".join(str(a) for a in (fmt, *args))
        if level >= logging.ERROR:
            self.last_error = line
        if line in self._seen or len(self._seen) >= _SEEN_LIMIT or not _configured():
            return
        self._seen.add(line)
        _log.debug("librdkafka", client=self.role, level=logging.getLevelName(level), line=line)


def _configured() -> bool:
    import structlog

    return bool(structlog.is_configured())


def client_conf(conf: dict[str, str], role: str) -> dict[str, Any]:
    """``conf`` with a fresh :class:`ClientLog` as its ``logger``."""
    return {**conf, "logger": ClientLog(role)}
