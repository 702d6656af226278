"""Reaching the broker from a command: its address, quiet clients, and one clear error line.

librdkafka would print a line to stderr for every failed connection attempt (many a second)
and its exceptions read ``KafkaError{code=_TRANSPORT,val=-195,str="..."}``; a command wants
one line naming the bootstrap servers and the cause instead. Every command that talks to a
broker builds its clients with :func:`quiet` and words its failure with :func:`cannot`.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from confluent_kafka import KafkaError

from kheaders._model.redact import printable


def bootstrap_of(args: Any, command: str) -> str | None:
    """``--bootstrap`` or ``$KHEADERS_BOOTSTRAP``; None (after saying so) when neither is set."""
    bootstrap: str = args.bootstrap or os.environ.get("KHEADERS_BOOTSTRAP", "").strip()
    if not bootstrap:
        print(f"kheaders {command}: pass --bootstrap or set KHEADERS_BOOTSTRAP", file=sys.stderr)
        return None
    return bootstrap


def quiet(config: dict[str, Any], errors: list[KafkaError]) -> dict[str, Any]:
    """``config`` with librdkafka's log turned off and its errors collected in ``errors``."""
    return {**config, "log_level": 0, "error_cb": errors.append}


def reason(err: object) -> str:
    """librdkafka's error text without the ``KafkaError{code=...}`` wrapping."""
    if isinstance(err, KafkaError):
        return err.str()
    if isinstance(err, BaseException) and err.args and isinstance(err.args[0], KafkaError):
        return str(err.args[0].str())
    return str(err)


def unreachable(doing: str, bootstrap: str, exc: BaseException, errors: list[KafkaError]) -> str:
    """What could not be done, where, and why (the client's last error, else the
    exception's own text), escaped: ``cannot list topics from HOST:PORT: CAUSE``."""
    cause = reason(errors[-1] if errors else exc)
    return f"cannot {doing} from {printable(bootstrap)}: {printable(cause)}"


def cannot(
    command: str, doing: str, bootstrap: str, exc: BaseException, errors: list[KafkaError]
) -> str:
    """The one line a command prints when the broker did not answer (see :func:`unreachable`)."""
    return f"kheaders {command}: {unreachable(doing, bootstrap, exc, errors)}"
